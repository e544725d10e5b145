export { FlagService } from './flag.service.ts';
export { FlagStore } from './flag.store.ts';
export { FlagReadModel } from './flag.read-model.ts';
export type { FlagChange, FlagChanges } from './flag-changes.ts';
export { flagAdminRoutes } from './flag.admin-routes.ts';
export { flagPublicRoutes } from './flag.routes.ts';
