export { flagUsageAdminRoutes } from './flag-usage.routes.ts';
export { FlagUsage } from './flag-usage.service.ts';
export { nextFlushDelay } from './flag-usage.ts';
export { FlagUsageStore } from './flag-usage.store.ts';
