export { formAdminRoutes, type SubmissionCounts } from './form.routes.ts';
export { FormService } from './form.service.ts';
export { FormStore } from './form.store.ts';
export { type Form, isHttpUrl } from './form.ts';
