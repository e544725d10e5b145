export { CodeRefService } from './code-ref.service.ts';
export { CodeRefStore } from './code-ref.store.ts';
export { codeRefAdminRoutes, codeRefPublicRoutes } from './code-ref.routes.ts';
