import { navigate } from 'wouter/use-browser-location';
import type { paths } from './api.gen.ts';
import { setSessionHint } from './session-hint.ts';

/** The JSON answer of `method` on `path` with `status`, as the server's OpenAPI document says (api.gen.ts). */
export type Answer<P extends keyof paths, M extends 'get' | 'post' | 'patch' | 'put' | 'delete', S extends number = 200> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer T } } };
}
  ? T
  : never;

// The dashboard's one door to the server: the documented admin API (docs/api.md), same origin, with the
// session cookie of the sign-in. The admin token is never kept by the page (docs/adr/0013-dashboard.md).

/** One field of a refused request (the error object's `details`), or one the dashboard finds itself. */
export type FieldProblem = NonNullable<paths['/admin/v1/audit']['get']['responses']['4XX']['content']['application/json']['details']>[number];

/** An error answer of the API: its message and, for a 400, the fields that failed. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: FieldProblem[] = [],
  ) {
    super(message);
  }
}

/** Where a signed-out visitor is sent; the page they were on comes back after signing in. */
export function toSignIn(): void {
  const here = window.location.pathname + window.location.search;
  if (window.location.pathname !== '/sign-in') navigate(`/sign-in?next=${encodeURIComponent(here)}`);
}

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`/admin/v1${path}`, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'The server cannot be reached. Check your connection and try again.');
  }
  if (res.status === 204) return undefined as T;
  const data = (await res.json().catch(() => ({}))) as { message?: string; details?: FieldProblem[] };
  if (!res.ok) {
    if (res.status === 401 && path !== '/sessions') {
      setSessionHint(false);
      toSignIn();
    }
    throw new ApiError(res.status, data.message ?? `The server answered ${res.status}`, data.details);
  }
  return data as T;
}

// The API's shapes, taken from the generated api.gen.ts (npm run api-types): the client cannot drift from
// the server. The names are the dashboard's own; each says which answer it is.

export type Project = Answer<'/admin/v1/projects/{projectKey}', 'get'>;
export type Environment = Project['environments'][number];

/** A flag in one environment, as the admin API shows it. */
export type EnvFlag = Answer<'/admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}', 'patch'>;
/** A flag of the list: its tags and archiving, and its value in every environment. */
export type FlagEntry = Answer<'/admin/v1/projects/{projectKey}/flags', 'get'>['flags'][number];
export type FlagType = EnvFlag['type'];
export type Variants = EnvFlag['variants'];
export type VariantValue = Variants[string];
export type Rule = EnvFlag['rules'][number];
export type Serve = Rule['serve'];
/** Either `variant` or `split` is set. */
export type Split = NonNullable<Serve['split']>;
export type Prerequisite = EnvFlag['prerequisites'][number];

export type Segment = Answer<'/admin/v1/projects/{projectKey}/segments/{segmentKey}', 'get'>;
/** One test of one context attribute (docs/api.md, "Targeting"). */
export type Condition = Segment['conditions'][number];
export type Operator = Condition['operator'];

export type ApiKey = Answer<'/admin/v1/projects/{projectKey}/api-keys', 'get'>['apiKeys'][number] & { token?: string };

export type FeedbackPage = Answer<'/admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/feedback', 'get'>;
export type Feedback = FeedbackPage['feedback'][number];

export type CodeRef = Answer<'/admin/v1/projects/{projectKey}/code-refs', 'get'>['references'][number];
export type CodeRefRemoval = Answer<'/admin/v1/projects/{projectKey}/code-refs/removals', 'get'>['removals'][number];

export type StaleReport = Answer<'/admin/v1/projects/{projectKey}/stale-flags', 'get'>;
export type StaleRule = StaleReport['flags'][number]['rules'][number];

type ListedForm = Answer<'/admin/v1/forms', 'get'>['forms'][number];
/** A form; the list (GET /forms) adds its counts of submissions. */
export type Form = Answer<'/admin/v1/forms/{formKey}', 'get'> & Partial<Pick<ListedForm, 'submissionCount' | 'spamCount'>>;
export type SubmissionDetail = Answer<'/admin/v1/forms/{formKey}/submissions/{id}', 'get'>;
export type Submission = Answer<'/admin/v1/forms/{formKey}/submissions', 'get'>['submissions'][number];
export type StoredFile = Submission['files'][number];
export type Delivery = SubmissionDetail['deliveries'][number];

/** GET /sessions/current: who the dashboard acts as. */
export type CurrentSession = Answer<'/admin/v1/sessions/current', 'get'>;
export type Role = NonNullable<CurrentSession['role']>;
export type Member = Answer<'/admin/v1/users', 'get'>['users'][number];
/** An invitation; `token` and `url` only in the answer that created it. */
export type Invitation = Answer<'/admin/v1/invitations', 'get'>['invitations'][number] & { token?: string; url?: string };
/** A personal access token; `token` only in the answer that created it. */
export type AccessToken = Answer<'/admin/v1/me/tokens', 'get'>['tokens'][number] & { token?: string };

export type AuditEntry = Answer<'/admin/v1/audit', 'get'>['entries'][number];

/** The body of PATCH /forms/{formKey}: every setting optional (absent keeps, null clears). */
export type FormPatch = NonNullable<paths['/admin/v1/forms/{formKey}']['patch']['requestBody']>['content']['application/json'];
export type NotificationSettings = NonNullable<FormPatch['notifications']>;
export type AutoResponseSettings = NonNullable<FormPatch['autoResponse']>;
export type WebhookRoute = NonNullable<FormPatch['webhooks']>[number];
export type FieldRules = NonNullable<FormPatch['fieldRules']>;
export type FilePolicy = NonNullable<FormPatch['filePolicy']>;
export type SpamChecks = NonNullable<FormPatch['spamChecks']>;
/** POST /forms/{formKey}/mail-preview: both e-mails of a sample submission, rendered by the server. */
export type MailPreview = Answer<'/admin/v1/forms/{formKey}/mail-preview', 'post'>;
export type SpamDryRun = Answer<'/admin/v1/forms/{formKey}/spam-rules/dry-run', 'post'>;
export type TestDeliveries = Answer<'/admin/v1/forms/{formKey}/test-delivery', 'post'>;
export type SpamReason = Submission['spamReasons'][number];
/** GET /forms/{formKey}/analytics?days=: counts per UTC day, oldest first, and the totals. */
export type FormAnalytics = Answer<'/admin/v1/forms/{formKey}/analytics', 'get'>;
/** A form's read-only token for an integration; `token` only in the answer that created it. */
export type ReadToken = Answer<'/admin/v1/forms/{formKey}/read-tokens', 'get'>['readTokens'][number] & { token?: string };
