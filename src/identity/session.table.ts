/** Dashboard sign-in sessions (issue 9): only the SHA-256 hash of the session token is stored. */
export interface SessionsTable {
  id: string;
  token_hash: string;
  created_at: string;
  expires_at: string;
  /** The signed-in user (migration 0010); null for a session opened with the admin token. */
  user_id: string | null;
  /** Which admin token opened the session (migration 0011); null for a user's session. */
  admin_token_generation: string | null;
  /** How the session was opened (migration 0015): `password`, `admin_token` or `sso`; null before it. */
  sign_in_method: string | null;
}
