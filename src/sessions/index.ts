export type { Session } from './session.ts';
export { sessionRoutes } from './session.routes.ts';
export { SessionService } from './session.service.ts';
export { SessionStore } from './session.store.ts';
