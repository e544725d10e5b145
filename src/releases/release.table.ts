/** A release plan of a flag in one environment (issue 33); JSON columns are parsed by the store. */
export interface ReleasesTable {
  id: string;
  project_id: string;
  environment_id: string;
  flag_slug: string;
  status: string;
  variant: string;
  baseline: string;
  /** JSON array of ReleaseStep. */
  steps: string;
  /** JSON array of StepProgress, one per step. */
  progress: string;
  current_step: number;
  /** JSON array of Guardrail. */
  guardrails: string;
  /** JSON array of the guardrails' latest readings. */
  readings: string;
  template_key: string | null;
  rolled_back_reason: string | null;
  /** JSON of the creator's actor. */
  created_by: string;
  created_at: string;
  updated_at: string;
  /** Incremented by every move; moves update conditionally on it. */
  version: number;
}

export interface ReleaseTemplatesTable {
  id: string;
  project_id: string;
  key: string;
  name: string;
  steps: string;
  guardrails: string;
  created_at: string;
  updated_at: string;
}

/** One guardrail reading of one check (the chart of the two arms). */
export interface ReleaseReadingsTable {
  release_id: string;
  guardrail: number;
  at: string;
  state: string;
  reading: string;
}

/** An e-mail about a release, delivered by the release guard's rounds. */
export interface ReleaseNotificationsTable {
  id: string;
  release_id: string;
  recipient: string;
  subject: string;
  body: string;
  status: string;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}
