export { FlagdSyncServer, type FlagdSyncServerOptions } from './flagd-sync.server.ts';
export { FlagdSyncService } from './flagd-sync.service.ts';
export { FlagdSyncStore } from './flagd-sync.store.ts';
export { flagdSyncAdminRoutes } from './flagd-sync.routes.ts';
