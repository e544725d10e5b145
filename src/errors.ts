/**
 * The one registry of client-visible error messages and error kinds. `docs/errors.md` lists every
 * message below; `test/errors-doc.test.ts` checks that the two agree. Placeholders are `{name}`.
 */
export const messages = {
  generic: 'Something went wrong, please try again later.',
  missingKeyHeaders: 'Missing required headers: x-project-key or x-environment-key',
  flagNotFound: 'Flag with slug {slug} does not exist',
  previewFlagNotFound: 'Preview flag with key {flagKey} does not exist',
  environmentNotFound: 'Environment with key {environmentKey} does not exist',
  missingApiKey: 'Missing required header: x-api-key',
  invalidApiKey: 'Invalid API Key',
  codeRefsStored: 'Code references stored for {count} flags on branch {branch}',
  codeRefsStoredBranch: 'Code references stored for {count} flags on branch {branch}; {removed} flags no longer referenced there',
  bodyTooLarge: 'Request body is too large',
  unsupportedMediaType: 'Unsupported Content-Type',
  routeNotFound: 'Route {method} {url} not found',
  tooManyRequests: 'Too many requests, please try again later.',
  adminUnauthorized: 'Missing or invalid admin token',
  roleForbidden: 'Your role does not allow this',
  needsUser: 'This needs a user account: sign in with your e-mail address or use a personal access token',
  needsAdminToken: 'Only the admin token can do this',
  needsSession: 'This needs a signed-in session: an access token cannot create access tokens',
  invalidCredentials: 'Invalid e-mail or password',
  userExists: 'A user with this e-mail address exists already',
  userNotFound: 'User {id} does not exist',
  lastOwner: 'The last owner cannot be removed or made an editor or viewer',
  invitationInvalid: 'This invitation is invalid, used or expired',
  invitationNotFound: 'Invitation {id} does not exist or was accepted',
  accessTokenNotFound: 'Access token {id} does not exist',
  crossSiteRefused: 'Cross-site request refused: a signed-in write must come from the dashboard origin',
  validationFailed: 'Invalid request',
  projectNotFound: 'Project with key {projectKey} does not exist',
  adminEnvironmentNotFound: 'Environment with key {environmentKey} does not exist in project {projectKey}',
  adminFlagNotFound: 'Flag with slug {slug} does not exist in project {projectKey}',
  flagExists: 'Flag with slug {slug} already exists in project {projectKey}',
  segmentExists: 'Segment with key {segmentKey} already exists in project {projectKey}',
  segmentNotFound: 'Segment with key {segmentKey} does not exist in project {projectKey}',
  segmentInUse: 'Segment {segmentKey} is used by rules of these flags: {flags}',
  flagIsPrerequisite: 'Flag {slug} is a prerequisite of these flags: {flags}',
  flagRenamePrerequisite: 'Flag {slug} cannot be renamed while these flags name it as a prerequisite: {flags}',
  lastEnvironment: 'Environment {environmentKey} is the last one of project {projectKey}: a project keeps at least one environment',
  flagdInvalid: 'Invalid flagd definition at {path}: {reason}',
  flagdTypeConflict: 'Flag {slug} is a {existing} flag; the definition makes it a {imported} flag',
  unleashInvalid: 'Invalid Unleash export at {path}: {reason}',
  documentTypeConflict: 'Flag {slug} is a {existing} flag; the document makes it a {wanted} flag (delete the flag first to change its type)',
  documentFormElsewhere: 'Form {formKey} belongs to another project (or to none): a document names the forms of its own project',
  documentProjectAmbiguous: '{count} projects are named {name}: say which one with projectKey',
  documentPreviewProtected:
    'The document changes the preview settings of flag {slug} in {environment}, which is protected, and a change request does not carry preview settings: an owner may apply it with bypassProtection, or change them while the environment is not protected',
  documentDuplicateEnvironments: 'Project {projectKey} has two environments with the same name: a document names environments by name, so rename one first',
  environmentExists: 'Environment with name {name} already exists in project {projectKey}',
  environmentProtected:
    'Environment {environment} of project {projectKey} is protected: propose the change in a change request (POST /admin/v1/projects/{projectKey}/change-requests), or an owner may bypass with ?bypassProtection=true',
  environmentProtectedDelete: 'Environment {environment} of project {projectKey} is protected: an owner must unprotect it before it can be deleted',
  flagPreviewProtected:
    'Flag {slug} would be created with preview settings in {environment}, which is protected, and a change request does not carry preview settings: an owner may create it with ?bypassProtection=true, or set them while the environment is not protected',
  flagRenameProtected:
    'Project {projectKey} has protected environments, whose answers a rename would change without review: an owner may rename with ?bypassProtection=true',
  projectProtected:
    'Segments of project {projectKey} are used by its protected environments: propose the change in a change request (POST /admin/v1/projects/{projectKey}/change-requests), or an owner may bypass with ?bypassProtection=true',
  changeConflict: 'Flag {slug} in {environment} was changed after this change was based on it: review the change again',
  segmentChangeConflict: 'Segment {segmentKey} was changed after this change was based on it: review the change again',
  changeRequestNotFound: 'Change request {id} does not exist in project {projectKey}',
  changeRequestState: 'The change request is {status}: it cannot be {action}',
  changeRequestApprovals: 'The change request has {approvals} of the {required} approvals it needs',
  changeRequestOwnApproval: 'The author of a change request cannot approve it',
  changeRequestOwnRevision: 'Who wrote a revision of a change request since its approvals were last reset cannot approve it',
  changeRequestRevision: 'The change request is at revision {current}, not {revision}: review it again before approving',
  changeRequestApprover: 'Approvals come from members: sign in or use a personal access token',
  changeRequestEmpty: 'A change request changes at least one flag or segment',
  scheduleInPast: 'The time to apply at must be in the future',
  webhookNotFound: 'Webhook {id} does not exist in project {projectKey}',
  webhookDeliveryNotFound: 'Webhook delivery {id} does not exist',
  webhookUrl: 'A webhook URL is an http or https URL without a user name or password',
  promoteSameEnvironment: 'Promotion needs two different environments',
  revertNothing: 'The flag has no change to revert there',
  auditEntryNotFound: 'Audit entry {id} is not a change of flag {slug} in this environment',
  apiKeyNotFound: 'API key {id} does not exist in project {projectKey}',
  serviceUnavailable: 'Service unavailable',
  headersTooLarge: 'Request headers are too large',
  requestTimeout: 'Request timed out',
  formSubmitted: 'Your form has been submitted successfully!',
  formNotFound: 'Error: Form with key {formKey} does not exist',
  formViewsOff: 'Error: Form {formKey} does not count views (its analytics setting turns them on)',
  formDisabled: 'Error: This form is not accepting submissions',
  formWebsiteNotAllowed: 'Error: Submissions from this website are not allowed for this form',
  formIpBlocked: 'Error: Submissions from your address are not allowed for this form',
  formUploadsDisabled: 'Error: File uploads are not enabled for this form',
  formFileTooLarge: 'Error: File "{fileName}" exceeds the {limit} upload limit',
  formTooManyFiles: 'Error: Too many files, at most {max} files per submission',
  formTooManyFields: 'Error: Too many fields, at most {max} fields per submission',
  formFieldTooLarge: 'Error: Field "{field}" exceeds the {limit} field size limit',
  formBodyTooLarge: 'Error: The submission exceeds the {limit} size limit',
  formFieldNameTooLong: 'Error: A field name is longer than {max} characters',
  formTextTooLarge: 'Error: The text of the submission exceeds the {limit} limit',
  formEmpty: 'Error: The submission has no fields',
  formCaptchaMissing: 'Error: Please complete the CAPTCHA before submitting',
  formCaptchaFailed: 'Error: The CAPTCHA check failed, please try again',
  formCaptchaUnavailable: 'Error: The CAPTCHA could not be checked right now, please try again in a moment',
  formUnreadable: 'Error: The submission body could not be read',
  formUnsupportedMediaType: 'Error: Unsupported Content-Type; send application/json, application/x-www-form-urlencoded or multipart/form-data',
  formFieldsInvalid: 'Error: Some fields are not valid: {fields}',
  formFileTypeNotAllowed: 'Error: File "{fileName}" is not an allowed type',
  formFilesTooLarge: 'Error: The files of the submission exceed the {limit} total limit',
  formRateLimited: 'Error: Too many submissions to this form right now, please try again later',
  formProofOfWorkMissing: 'Error: Please complete the verification before submitting',
  formProofOfWorkFailed: 'Error: The verification failed, please try again',
  fieldRequiredMissing: 'is required',
  fieldRequiredEmpty: 'is required and cannot be empty',
  fieldEmail: 'should be an email',
  fieldNumeric: 'should be a number',
  fieldText: 'should be text',
  fieldBoolean: 'should be true or false',
  fieldUrl: 'should be a URL',
  fieldDate: 'should be a date (YYYY-MM-DD)',
  fieldTooShort: 'should be at least {min} characters long',
  fieldTooLong: 'should be at most {max} characters long',
  fieldPattern: 'does not have the expected format',
  fieldNotAllowed: 'is not one of the allowed values',
  fieldTooSmall: 'should be at least {min}',
  fieldTooLarge: 'should be at most {max}',
  fieldUnknown: 'is not a field of this form',
  adminFormNotFound: 'Form with key {formKey} does not exist',
  formReadTokenNotFound: 'Read token {id} does not exist in form {formKey}',
  formReadTokenLimit: 'Form {formKey} has {max} read tokens already: delete one first',
  formReadTokenForbidden: "A form read token reads its form's submissions and nothing else",
  submissionNotFound: 'Submission {id} does not exist in form {formKey}',
  submissionFileNotFound: 'File {fileId} does not exist in submission {id}',
  formDeliveryNotFound: 'Delivery {id} does not exist in form {formKey}',
  formDeliveryPending: 'Delivery {id} is already queued; it is sent as soon as it is due',
  formFileStoreUnavailable: 'Error: Files cannot be stored right now, please try again in a moment',
  fileStoreUnavailable: 'The file store cannot be reached right now; try again in a moment',
  flagdSyncRefused: 'The selector is not a valid flagd sync token of this Flagpost',
  flagdSyncThrottled: 'Too many refused selectors from this address; try again in {seconds} s',
  flagdSyncTooManyStreams: 'Too many open sync streams from this address',
  flagdSyncUnavailable: 'The flags of this environment cannot be read right now; try again',
  flagdSyncShuttingDown: 'Flagpost is shutting down; reconnect',
  ssoNotConfigured: 'Single sign-on is not configured',
  ssoFailed: 'Single sign-on failed: start again from the sign-in page',
  ssoNoRole: 'Your account at the identity provider is in no group that has a role in Flagpost: ask an owner',
  ssoNoEmail: 'The identity provider gave no e-mail address for your account',
  ssoEmailTaken: 'A member with this e-mail address exists and is not linked to this identity: ask an owner',
  ssoEmailUnverified: 'The identity provider has not verified the e-mail address of your account',
  ssoBusy: 'Too many single sign-ons are under way: try again in a minute',
  ssoBreakGlass: 'The break-glass owner signs in with a password, never with single sign-on',
  ssoUnavailable: 'The identity provider cannot be reached right now; try again in a moment',
  passwordsOff: 'Password sign-in is off on this Flagpost: sign in with single sign-on',
  projectRoleNotFound: 'The member has no role on project {projectKey}',
  clientKeysMissing: 'Missing required headers: x-project-key and x-environment-key',
  clientKeysUnknown: 'Unknown project or environment key',
  eventInvalid: '{field}: {reason}',
  metricExists: 'Metric with key {metricKey} already exists in project {projectKey}',
  metricNotFound: 'Metric with key {metricKey} does not exist in project {projectKey}',
  metricInUse: 'Metric {metricKey} is used by running experiments: {experiments}',
  experimentExists: 'Experiment with key {experimentKey} already exists in environment {environmentKey}',
  experimentNotFound: 'Experiment with key {experimentKey} does not exist in environment {environmentKey}',
  experimentProtected:
    'Environment {environment} of project {projectKey} is protected: change requests do not carry experiments, so an owner may create, change, start or stop one with ?bypassProtection=true',
  experimentNotDraft: 'Experiment {experimentKey} is {status}: {field} can change only before it starts',
  experimentState: 'Experiment {experimentKey} is {status}: it cannot be {action}',
  experimentNoSplit: 'Flag {flagKey} has no rule that serves a split in {environment}: an experiment measures a split, so add a rule with a split first',
  experimentSplitAmbiguous: 'Flag {flagKey} has {count} rules that serve a split: name the one to measure with ruleId',
  experimentRuleNotSplit: 'Rule {ruleId} of flag {flagKey} does not exist or serves no split: an experiment measures a split',
  experimentControlNotInSplit: 'The split of rule {ruleId} does not serve the control variant {variant}',
  experimentFlagBusy: 'Experiment {other} is already running on flag {flagKey} in this environment',
  experimentNotStarted: 'Experiment {experimentKey} has not started: it has no results yet',
  experimentMetricMissing: 'Experiment {experimentKey} names metrics that no longer exist ({metrics}): change its metrics first',
  releaseActive: 'Flag {slug} already has an active release in {environment}: complete, roll back or cancel it first',
  releaseNotFound: 'Release {releaseId} does not exist for flag {slug} in {environment}',
  releaseState: 'Release {releaseId} is {status}: it cannot be {action}',
  releaseSelfApproval: 'Environment {environment} requires approvals: the release must be approved by someone other than its creator',
  releaseMoved: 'Release {releaseId} changed while this request was handled: read it again',
  releaseRuleOwned: 'Rule {ruleId} of flag {slug} belongs to release {releaseId} while it is active: pause, roll back or cancel the release to change it',
  releaseTemplateExists: 'Release template with key {templateKey} already exists in project {projectKey}',
  releaseTemplateNotFound: 'Release template with key {templateKey} does not exist in project {projectKey}',
  releaseMetricNotFound: 'guardrails[{index}].metric: no metric {metricKey} in project {projectKey}',
  releaseTargetRefused: 'guardrails[{index}].prometheus.url {reason}',
} as const;

export type MessageKey = keyof typeof messages;

/** Fills the `{name}` placeholders of a registered message. */
export function message(key: MessageKey, params: Record<string, string | number> = {}): string {
  return messages[key].replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? `{${name}}`));
}

export type ErrorKind =
  | 'validation'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unprocessable'
  | 'rate_limited'
  | 'unavailable';

export const statusOfKind: Record<ErrorKind, number> = {
  validation: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  unavailable: 503,
};

export interface FieldProblem {
  field: string;
  reason: string;
}

export interface AppErrorOptions {
  details?: FieldProblem[];
  /** The refused fields of a submission (issue 34: field rules), each with Formspree's code or Flagpost's own. */
  fieldErrors?: Array<{ field: string; code: string; message: string }>;
  /** Sent as Retry-After (a 429 or 503 that the client may retry later). */
  retryAfterSeconds?: number;
}

/** An error whose message is safe to show to the client. Everything else is answered generically. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly options: AppErrorOptions = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = statusOfKind[kind];
  }

  static validation(details: FieldProblem[], text: string = messages.validationFailed): AppError {
    return new AppError('validation', text, { details });
  }
}
