export { ChangeApplier } from './change-apply.service.ts';
export { changeAdminRoutes } from './change.routes.ts';
export { ChangeRequestService } from './change-request.service.ts';
export { ChangeScheduler } from './change.scheduler.ts';
export { ChangeStore } from './change.store.ts';
export { PromotionService } from './promotion.service.ts';
export { ChangeNotifier } from './change.notifier.ts';
