/** API keys are stored only as a SHA-256 hash of the token (contract D11). */
export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string;
  token_hash: string;
  /** The first characters of the token, so that an operator can tell keys apart. */
  token_prefix: string;
  created_at: string;
  revoked_at: string | null;
}
