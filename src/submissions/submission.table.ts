import type { Generated } from 'kysely';

/** Submissions of a form (contract D18): the fields as JSON text, with the request metadata. */
export interface SubmissionsTable {
  id: string;
  form_id: string;
  /** The submitted fields as a JSON object. */
  data: string;
  spam: number;
  ip: string | null;
  user_agent: string | null;
  referer: string | null;
  origin: string | null;
  created_at: string;
  /** Migration 0026 (issue 34): why it is spam (JSON `[{check, detail}]`), the fingerprint of its normalised fields, a Formspree client's webdriver flag. */
  spam_reasons: string | null;
  fingerprint: string | null;
  webdriver: number | null;
}

export interface SubmissionFilesTable {
  id: string;
  submission_id: string;
  /** Order of the file within its submission. */
  position: number;
  field: string;
  name: string;
  content_type: string;
  size: number;
  /** blob on SQLite, bytea on PostgreSQL; empty when the bytes are in an object store. */
  content: Buffer;
  /** Where the bytes are: `db` (in `content`), `fs` or `s3` (the object `object_key`). Migration 0014. */
  storage: string;
  object_key: string | null;
}

/** Proof-of-work solutions already used (migration 0026): a solution counts once until its challenge expires. */
export interface FormPowSolutionsTable {
  signature: string;
  expires_at: string;
}

/**
 * The per-form rate limit's counts (migration 0034): submissions stored per form, scope ('' for the whole
 * form, else the sender's address) and second since the epoch.
 */
export interface FormRateCountsTable {
  form_id: string;
  scope: string;
  second: number;
  n: number;
}

/**
 * SQLite only (migration 0028): the FTS5 rowid of each submission's words in `submission_search` (an
 * FTS5 table reached through raw SQL). PostgreSQL keeps them in `submissions.search` instead.
 */
export interface SubmissionSearchRowsTable {
  id: Generated<number>;
  submission_id: string;
}
