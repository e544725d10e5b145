export { formAdminRoutes, type SubmissionCounts } from './form.routes.ts';
export { FormService } from './form.service.ts';
export { FormStore } from './form.store.ts';
export {
  type AutoResponseSettings,
  checkConditions,
  type FormMailSettings,
  mailSettingsProblems,
  type NotificationSettings,
  submitterAddress,
  type WebhookRoute,
} from './form-mail.ts';
export { oneLine, renderHtml, renderLine, templateVariables } from './mail-template.ts';
export { CAPTCHA_PROVIDERS, type CaptchaProvider, type CaptchaSettings, type FilePolicy, type Form, isHttpUrl, type SpamChecks } from './form.ts';
export { checkFields, type FieldError, type FieldRules } from './field-rules.ts';
export { documentFormSchema, spamChecksSchema } from './form.schemas.ts';
export { mailSettingsBody } from './form-mail.schemas.ts';
export { type DocumentForm, SECRET_REFERENCE, secretVariable } from './form-document.ts';
export { formReadTokenRoutes } from './read-token.routes.ts';
export { FormReadTokenService } from './read-token.service.ts';
export { FormReadTokenStore } from './read-token.store.ts';
