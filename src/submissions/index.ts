export { submissionIntakeRoutes, UploadSlots } from './submission-intake.routes.ts';
export { formspreeRoutes } from './formspree.routes.ts';
export { submissionAdminRoutes } from './submission.routes.ts';
export { SubmissionService } from './submission.service.ts';
export { SubmissionStore } from './submission.store.ts';
export { CaptchaVerifier } from './captcha.ts';
export { RetentionJob, type RetentionRound } from './retention.ts';
export { FileMigration, type FileMigrationProgress } from './file-migration.ts';
