/** One delivery to make after a submission was committed (contract D18). */
export interface OutboxTable {
  id: string;
  submission_id: string;
  /** The form of the submission (null only for rows older than migration 0003 whose submission was gone). */
  form_id: string | null;
  kind: string;
  /** Webhook URL or e-mail address. */
  target: string;
  /** The exact webhook body, or the e-mail as JSON. */
  payload: string;
  status: string;
  attempts: number;
  /** Due time; while an attempt runs, the end of its lease. */
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface DeliveryAttemptsTable {
  id: string;
  outbox_id: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  ok: number;
  status_code: number | null;
  error: string | null;
}
