/** A change request (issue 24). Timestamps are ISO text, booleans 0/1. */
export interface ChangeRequestsTable {
  id: string;
  project_id: string;
  environment_id: string;
  title: string;
  description: string;
  /** draft | in_review | approved | scheduled | applied | rejected | cancelled (change.ts). */
  status: string;
  author_type: string;
  author_id: string | null;
  author_label: string;
  /** Counts edits of the changes; approvals are of one revision. */
  revision: number;
  scheduled_at: string | null;
  /** JSON actor ({type, id, label}) of who scheduled it. */
  scheduled_by: string | null;
  applied_at: string | null;
  applied_late: number;
  failure: string | null;
  created_at: string;
  updated_at: string;
  /** 'flags_as_code' when an apply opened it (migration 0020); null otherwise. */
  origin: string | null;
}

/** One changed flag (in the request's environment) or segment, with its whole new configuration as JSON. */
export interface ChangeItemsTable {
  id: string;
  change_request_id: string;
  position: number;
  kind: string;
  key: string;
  base_version: number | null;
  config: string;
  /** The configuration it replaced when the request was applied, as JSON (migration 0033); null before that. */
  applied_before: string | null;
}

export interface ChangeApprovalsTable {
  change_request_id: string;
  user_id: string;
  label: string;
  created_at: string;
}

/** Who wrote each revision of a request (migration 0021): the approvals' rule reads it (change.ts). */
export interface ChangeRequestRevisionsTable {
  id: string;
  change_request_id: string;
  revision: number;
  author_type: string;
  author_id: string | null;
  author_label: string;
  /** 1 when writing this revision cleared approvals there were. */
  approvals_reset: number;
  created_at: string;
}

export interface ChangeCommentsTable {
  id: string;
  change_request_id: string;
  author_id: string | null;
  author_label: string;
  body: string;
  created_at: string;
}

/** An e-mail about a change request, to one recipient; delivered by the scheduler's rounds. */
export interface ChangeNotificationsTable {
  id: string;
  change_request_id: string;
  recipient: string;
  subject: string;
  body: string;
  /** pending | sent | failed */
  status: string;
  attempts: number;
  /** Due time; while an attempt runs, the end of its lease. */
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}
