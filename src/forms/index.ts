export { formAdminRoutes, type SubmissionCounts } from './form.routes.ts';
export { FormService } from './form.service.ts';
export { FormStore } from './form.store.ts';
export { CAPTCHA_PROVIDERS, type CaptchaProvider, type CaptchaSettings, type Form, isHttpUrl } from './form.ts';
