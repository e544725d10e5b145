/** Per-form read-only tokens for integrations (migration 0028): only the SHA-256 hash of the secret is kept. */
export interface FormReadTokensTable {
  id: string;
  form_id: string;
  name: string;
  /** The first characters of the token (`fpf_` and four more), shown to tell tokens apart. */
  token_prefix: string;
  token_hash: string;
  created_at: string;
  last_used_at: string | null;
}
