export { FeedbackService } from './feedback.service.ts';
export { FeedbackStore } from './feedback.store.ts';
export { feedbackAdminRoutes, feedbackPublicRoutes } from './feedback.routes.ts';
