import type { Actor } from '../identity/index.ts';

export type { Actor };

/** What an entry is about. */
export type AuditEntity =
  | 'project'
  | 'environment'
  | 'flag'
  | 'segment'
  | 'change_request'
  | 'webhook'
  | 'api_key'
  | 'form'
  | 'submission'
  | 'code_refs'
  | 'personal_data'
  | 'member'
  | 'invitation'
  | 'access_token'
  | 'settings'
  | 'sign_in'
  | 'metric'
  | 'experiment'
  | 'release'
  | 'release_template';

/** A field's value before and after the write; a created entity has only `after`, a deleted one only `before`. */
export interface FieldChange {
  before?: unknown;
  after?: unknown;
}

/** What a service tells the audit log about one write. */
export interface AuditInput {
  projectId?: string | null;
  entity: AuditEntity;
  entityId: string;
  environmentKey?: string | null;
  /** `<entity>.<verb>`, such as `flag.updated`. */
  action: string;
  changes?: Record<string, FieldChange>;
}

export interface AuditEntry {
  id: string;
  at: string;
  actor: { type: Actor['type']; id: string | null; label: string };
  projectKey: string | null;
  entity: AuditEntity;
  entityId: string;
  environmentKey: string | null;
  action: string;
  changes: Record<string, FieldChange>;
}

export interface AuditFilter {
  projectKey?: string;
  entity?: AuditEntity;
  entityId?: string;
  actorId?: string;
  actorType?: Actor['type'];
  excludeEntities?: readonly AuditEntity[];
  /** Only entries of these projects (ids). */
  projectIds?: readonly string[];
  since?: string;
  until?: string;
}

/**
 * A value an entry records to name what it is about, unchanged by the write (a webhook's URL when only its
 * events change, an experiment's name when it starts): the same before and after, so that the log names
 * things, not ids (issue 31 item 12). Spread before the changes, which replace it when the write changed it.
 */
export const unchanged = <T>(value: T): FieldChange => ({ before: value, after: value });

/**
 * The fields of `after` that differ from `before`, among `fields` only: the caller names the fields it
 * may record, so a secret (a token, a webhook secret, a password hash) is never among them.
 */
export function changesOf<T extends object>(before: T | null, after: T | null, fields: ReadonlyArray<keyof T & string>): Record<string, FieldChange> {
  const changes: Record<string, FieldChange> = {};
  for (const field of fields) {
    const was = before === null ? undefined : before[field];
    const is = after === null ? undefined : after[field];
    if (before !== null && after !== null && JSON.stringify(was) === JSON.stringify(is)) continue;
    const change: FieldChange = {};
    if (before !== null) change.before = was ?? null;
    if (after !== null) change.after = is ?? null;
    changes[field] = change;
  }
  return changes;
}
