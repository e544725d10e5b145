/** Evaluations of one flag in one environment during one UTC hour (primary key: environment_id, flag_slug, hour). */
export interface FlagUsageTable {
  environment_id: string;
  flag_slug: string;
  /** The hour's start, ISO-8601 UTC (`2026-11-24T09:00:00.000Z`). */
  hour: string;
  /** bigint on PostgreSQL, which pg returns as text. */
  evaluations: number | string;
  /** The latest flush that carried evaluations of this bucket. */
  last_evaluated_at: string;
}
