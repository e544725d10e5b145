export { formAdminRoutes } from './form.routes.ts';
export { FormService } from './form.service.ts';
export { FormStore } from './form.store.ts';
export { submissionIntakeRoutes } from './submission-intake.routes.ts';
export { submissionAdminRoutes } from './submission.routes.ts';
export { SubmissionService } from './submission.service.ts';
export { SubmissionStore } from './submission.store.ts';
