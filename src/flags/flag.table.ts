/** One row per flag and environment (unique on environment_id + slug). Booleans are 0/1, JSON is text. */
export interface FlagsTable {
  id: string;
  project_id: string;
  environment_id: string;
  slug: string;
  enabled: number;
  payload: string | null;
  expired_at: string | null;
  description: string;
  is_preview: number;
  preview_name: string | null;
  /** TipTap/ProseMirror document JSON (contract D9). */
  preview_content: string | null;
  created_at: string;
  updated_at: string;
  /** 'boolean' | 'string' | 'number' | 'object', the same for every row of a slug. */
  type: string;
  /** JSON object of named variants. */
  variants: string;
  default_variant: string | null;
  /** 'ENABLED' | 'DISABLED' (flagd's state). */
  state: string;
  /** JSON arrays. */
  rules: string;
  prerequisites: string;
  /** Imported JSON Logic not expressible as rules, or null. */
  json_logic: string | null;
  /** JSON object of flagd flag metadata, or null. */
  metadata: string | null;
  /** Incremented by every write of this row (change requests detect writes in between, issue 24). */
  version: number;
  /** JSON array of tag strings, the same on every row of a slug. */
  tags: string;
  /** When the flag was archived, or null; the same on every row of a slug. */
  archived_at: string | null;
}
