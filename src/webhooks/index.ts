export { webhookAdminRoutes } from './webhook.routes.ts';
export { WebhookService } from './webhook.service.ts';
export { WebhookStore } from './webhook.store.ts';
export { WebhookWorker } from './webhook.worker.ts';
export { WEBHOOK_EVENTS, type WebhookEvent } from './webhook.ts';
