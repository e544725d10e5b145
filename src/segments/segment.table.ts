/** Reusable groups of conditions, per project (unique on project_id + key). JSON is text. */
export interface SegmentsTable {
  id: string;
  project_id: string;
  key: string;
  name: string;
  description: string;
  /** 'all' | 'any'. */
  match: string;
  /** JSON array of conditions. */
  conditions: string;
  created_at: string;
  updated_at: string;
  /** Incremented by every write (issue 24). */
  version: number;
}
