/** One exposure: a user was served a variant of a flag (no primary key; see migration 0023). */
export interface ExposuresTable {
  environment_id: string;
  flag_key: string;
  variant: string;
  targeting_key: string;
  /** Epoch milliseconds; bigint on PostgreSQL, which pg returns as text. */
  occurred_at: number | string;
}

/** One tracked event of a user (`POST /v1/track` kind `track`). */
export interface TrackedEventsTable {
  environment_id: string;
  name: string;
  targeting_key: string;
  value: number | null;
  /** JSON object of flat attributes, or null. */
  attributes: string | null;
  /** Epoch milliseconds. */
  occurred_at: number | string;
}

/** The rollup results read: an experiment's users, the variant of their first exposure and its time (primary key: experiment_id, targeting_key). */
export interface ExperimentUsersTable {
  experiment_id: string;
  targeting_key: string;
  variant: string;
  /** Epoch milliseconds of the first exposure since the experiment started. */
  first_at: number | string;
  /** 1 when the user was also exposed to another variant. */
  multiple: number;
}
