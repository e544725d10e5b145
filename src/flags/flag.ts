/** One flag in one environment. */
export interface Flag {
  id: string;
  projectId: string;
  environmentId: string;
  slug: string;
  enabled: boolean;
  payload: Record<string, unknown> | null;
  expiredAt: string | null;
  description: string;
  isPreview: boolean;
  previewName: string | null;
  /** TipTap JSON document (contract D9). */
  previewContent: unknown;
  createdAt: string;
  updatedAt: string;
}

export const SLUG_MAX_LENGTH = 150;
export const SLUG_PATTERN = '^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$';

/**
 * Slugs of the fixed routes below /v1/flags. GET /v1/flags/preview shadows a flag named `preview`;
 * `code-refs` is only POSTed today, but is kept free so that a GET on it can be added later
 * (docs/adr/0003-reserved-slugs.md).
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set(['preview', 'code-refs']);

/** Writable fields, as sent by the admin API; absent means "keep", null means "clear". */
export interface FlagValues {
  enabled?: boolean;
  payload?: Record<string, unknown> | null;
  expiredAt?: string | null;
  description?: string | null;
  isPreview?: boolean;
  previewName?: string | null;
  previewContent?: unknown;
}

/** Applies PATCH semantics of the admin API to a flag. */
export function applyFlagValues(flag: Flag, values: FlagValues, updatedAt: string): Flag {
  const next = { ...flag, updatedAt };
  if (values.enabled !== undefined) next.enabled = values.enabled;
  if (values.payload !== undefined) next.payload = values.payload;
  if (values.expiredAt !== undefined) next.expiredAt = values.expiredAt === null ? null : normalizeDate(values.expiredAt);
  if (values.description !== undefined) next.description = values.description ?? '';
  if (values.isPreview !== undefined) next.isPreview = values.isPreview;
  if (values.previewName !== undefined) next.previewName = values.previewName;
  if (values.previewContent !== undefined) next.previewContent = values.previewContent;
  return next;
}

/** Stores every date-time in one form, ISO-8601 UTC with milliseconds. */
export function normalizeDate(value: string): string {
  return new Date(value).toISOString();
}

/** GET /v1/flags/{slug}: the Flag resource of the specification, without timestamps. */
export const publicFlag = (f: Flag) => ({
  slug: f.slug,
  enabled: f.enabled,
  payload: f.payload,
  expiredAt: f.expiredAt,
  description: f.description,
});

/** Elements of GET /v1/flags: Flag with timestamps. */
export const listedFlag = (f: Flag) => ({ ...publicFlag(f), createdAt: f.createdAt, updatedAt: f.updatedAt });

/** Elements of GET /v1/flags/preview; `html` is the rendered preview content. */
export const previewFlag = (f: Flag, html: string) => ({
  slug: f.slug,
  enabled: f.enabled,
  isPreview: true as const,
  previewName: f.previewName,
  previewContent: html,
  expiredAt: f.expiredAt,
  createdAt: f.createdAt,
});

/** The admin API's view of a flag in one environment. */
export const adminFlag = (f: Flag, env: { key: string; name: string }) => ({
  slug: f.slug,
  environment: { key: env.key, name: env.name },
  key: env.key,
  name: env.name,
  enabled: f.enabled,
  payload: f.payload,
  expiredAt: f.expiredAt,
  description: f.description,
  isPreview: f.isPreview,
  previewName: f.previewName,
  previewContent: f.previewContent ?? null,
  createdAt: f.createdAt,
  updatedAt: f.updatedAt,
});

/** Newest first; ties (same millisecond) broken by the time-ordered id. */
export function byNewest(a: Flag, b: Flag): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
