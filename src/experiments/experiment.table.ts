/** An experiment of an environment (unique: environment_id, key). */
export interface ExperimentsTable {
  id: string;
  project_id: string;
  environment_id: string;
  key: string;
  name: string;
  flag_key: string;
  rule_id: string | null;
  control_variant: string;
  /** JSON array of metric keys. */
  metrics: string;
  /** JSON array of metric keys. */
  guardrails: string;
  hypothesis: string | null;
  status: string;
  /** JSON `{ruleId, weights: [{variant, weight}]}`: the split measured, as it was at start; null before. */
  split: string | null;
  started_at: string | null;
  stopped_at: string | null;
  created_at: string;
  updated_at: string;
}
