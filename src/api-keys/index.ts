export { apiKeyAdminRoutes } from './api-key.routes.ts';
export { ApiKeyService } from './api-key.service.ts';
export { ApiKeyStore } from './api-key.store.ts';
