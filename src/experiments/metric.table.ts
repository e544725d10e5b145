/** A metric of a project (unique: project_id, key). */
export interface MetricsTable {
  id: string;
  project_id: string;
  key: string;
  name: string;
  event: string;
  type: string;
  denominator_event: string | null;
  direction: string;
  window_hours: number;
  created_at: string;
  updated_at: string;
}
