export interface FeedbackTable {
  id: string;
  project_id: string;
  environment_id: string;
  flag_slug: string;
  mood: string;
  rating: number;
  description: string | null;
  /** JSON object as text. */
  metadata: string | null;
  created_at: string;
}
