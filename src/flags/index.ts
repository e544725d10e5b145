export { flagAdminRoutes } from './flag.admin-routes.ts';
export { flagPublicRoutes } from './flag.routes.ts';
export { FlagService } from './flag.service.ts';
export { FlagStore } from './flag.store.ts';
export { answerUnroutableFlagRead, readKeyHeaders } from './read/flag.cache-headers.ts';
export type { FlagChange, FlagChanges } from './read/flag-changes.ts';
export { FlagFastPath } from './read/flag.fast-path.ts';
export { type FlagReadPath, openFlagReadPath } from './read/flag-read-path.ts';
export { FlagReadModel } from './read/flag.read-model.ts';
