/** A project's subscription to flag-change events (migration 0018). `events` is JSON text. */
export interface ProjectWebhooksTable {
  id: string;
  project_id: string;
  url: string;
  events: string;
  /** `slack`, `teams`, `discord`, or null for a signed generic webhook. */
  preset: string | null;
  /** The Standard Webhooks signing secret (`whsec_...`); null for presets, which are not signed. */
  secret: string | null;
  /** The `seq` of this webhook's newest delivery (deliveries are numbered under a lock of this row). */
  last_seq: number | string;
  created_at: string;
  updated_at: string;
}

/** One event to deliver to one webhook, in `seq` order. */
export interface ProjectWebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  seq: number | string;
  event: string;
  payload: string;
  status: string;
  attempts: number;
  /** Due time; while an attempt runs, the end of its lease. */
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface ProjectWebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  ok: number;
  status_code: number | null;
  error: string | null;
}
