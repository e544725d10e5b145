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

export interface FieldProblem {
  field: string;
  reason: string;
}

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

export type Project = Answer<'/admin/v1/projects/{projectKey}', 'get'>;
export type Environment = Project['environments'][number];

export type FlagType = 'boolean' | 'string' | 'number' | 'object';
export type VariantValue = boolean | string | number | Record<string, unknown>;
export type Variants = Record<string, VariantValue>;

export type Operator =
  | 'equals'
  | 'in'
  | 'startsWith'
  | 'endsWith'
  | 'contains'
  | 'lt'
  | 'lte'
  | 'gt'
  | 'gte'
  | 'semverEq'
  | 'semverLt'
  | 'semverLte'
  | 'semverGt'
  | 'semverGte'
  | 'semverCaret'
  | 'semverTilde'
  | 'before'
  | 'after'
  | 'exists'
  | 'inCidr'
  | 'matches'
  | 'rollout';

/** One test of one context attribute (docs/api.md, "Targeting"). */
export interface Condition {
  attribute: string;
  operator: Operator;
  values: Array<string | number | boolean>;
  negate?: boolean;
  caseInsensitive?: boolean;
}

export interface Segment {
  key: string;
  name: string;
  description: string;
  match: 'all' | 'any';
  conditions: Condition[];
  createdAt: string;
  updatedAt: string;
}

export interface Split {
  bucketing?: string;
  bucketBy?: string;
  weights: Array<{ variant: string; weight: number }>;
}

export type Serve = { variant: string } | { split: Split };

export interface Rule {
  id?: string;
  name: string;
  enabled: boolean;
  conditions: Condition[];
  segments: string[];
  serve: Serve;
}

export interface Prerequisite {
  flag: string;
  variants: string[];
}

/** A flag in one environment, as the admin API shows it. */
export interface EnvFlag {
  type: FlagType;
  state: 'ENABLED' | 'DISABLED';
  variants: Variants;
  defaultVariant: string | null;
  rules: Rule[];
  prerequisites: Prerequisite[];
  jsonLogic: unknown;
  metadata?: Record<string, string | number | boolean> | null;
  /** Whether flagd evaluates the flag's export exactly as Flagpost does, and if not, why. */
  flagd?: { portable: boolean; note: string | null };
  slug: string;
  environment: { key: string; name: string };
  enabled: boolean;
  payload: Record<string, unknown> | null;
  expiredAt: string | null;
  description: string;
  isPreview: boolean;
  previewName: string | null;
  previewContent: unknown;
  createdAt: string;
  updatedAt: string;
}

export interface FlagEntry {
  slug: string;
  /** Tags, the same in every environment. */
  tags?: string[];
  /** When the flag was archived, or null. */
  archivedAt?: string | null;
  environments: EnvFlag[];
}

export type ApiKey = Answer<'/admin/v1/projects/{projectKey}/api-keys', 'get'>['apiKeys'][number] & { token?: string };

export interface Feedback {
  id: string;
  mood: string;
  rating: number;
  description: string | null;
  createdAt: string;
}

export interface FeedbackPage {
  feedback: Feedback[];
  nextCursor: string | null;
  summary: { total: number; averageRating: number | null; moods: Record<string, number> };
}

export interface CodeRef {
  slug: string;
  projectName: string;
  branch: string;
  repositoryUrl: string | null;
  filePath: string;
  lineNumber: number;
  lineContent: string;
}

export interface CodeRefRemoval {
  slug: string;
  projectName: string;
  branch: string;
  removedAt: string;
  referenceCount: number;
  lastReferences: Array<{ filePath: string; lineNumber: number; lineContent: string }>;
}

export type StaleRule = 'expired_but_referenced' | 'unreferenced' | 'unchanged' | 'not_evaluated';

export interface StaleReport {
  generatedAt: string;
  unchangedDays: number;
  codeRefsUploaded: boolean;
  flags: Array<{
    slug: string;
    description: string;
    rules: StaleRule[];
    lastChangedAt: string;
    expiredIn: Array<{ key: string; name: string; expiredAt: string }>;
    removedFromCodeAt: string | null;
    references: CodeRef[];
    removals: CodeRefRemoval[];
  }>;
}

export interface Form {
  key: string;
  name: string;
  endpoint: string;
  enabled: boolean;
  uploadsEnabled: boolean;
  honeypot: string | null;
  websites: string[];
  blockedIps: string[];
  successUrl: string | null;
  errorUrl: string | null;
  redirectUrl: string | null;
  webhookUrl: string | null;
  notifyEmails: string[];
  slackWebhookUrl: string | null;
  discordWebhookUrl: string | null;
  retentionDays: number | null;
  deleteFilesAfterDelivery: boolean;
  captcha: { provider: string; minScore: number | null } | null;
  createdAt: string;
  updatedAt: string;
  webhookSecret?: string;
  submissionCount?: number;
  spamCount?: number;
}

export interface StoredFile {
  id: string;
  field: string;
  name: string;
  size: number;
  contentType: string;
}

export interface Submission {
  id: string;
  data: Record<string, unknown>;
  files: StoredFile[];
  spam: boolean;
  createdAt: string;
}

export interface Delivery {
  id: string;
  kind: string;
  target: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  deliveredAt: string | null;
  history: Array<{ attempt: number; startedAt: string; durationMs: number; ok: boolean; statusCode: number | null; error: string | null }>;
}

export interface SubmissionDetail extends Submission {
  meta: { ip: string | null; userAgent: string | null; referer: string | null; origin: string | null };
  deliveries: Delivery[];
}

export type Role = 'owner' | 'editor' | 'viewer' | 'none';

/** GET /sessions/current: who the dashboard acts as. */
export interface CurrentSession {
  expiresAt: string | null;
  role: Role;
  user: { id: string; email: string } | null;
}

export interface Member {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
  expiresAt: string;
  token?: string;
  url?: string;
}

export interface AccessToken {
  id: string;
  name: string;
  tokenPrefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** When the token stops working. */
  expiresAt: string | null;
  token?: string;
}

export type AuditEntry = Answer<'/admin/v1/audit', 'get'>['entries'][number];
