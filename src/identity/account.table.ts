/** A person who signs in to the dashboard (migration 0010). `email` is stored lowercased and unique. */
export interface UsersTable {
  id: string;
  email: string;
  /** `scrypt$N$r$p$salt$hash` (password.ts). */
  password_hash: string;
  role: string;
  created_at: string;
  updated_at: string;
}

/** An owner's invitation: single use (accepted_at), expiring; only the token's SHA-256 hash is kept. */
export interface InvitationsTable {
  id: string;
  email: string;
  role: string;
  token_hash: string;
  invited_by: string;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
}

/** A personal access token: acts with its user's role; shown once, kept as its hash. */
export interface AccessTokensTable {
  id: string;
  user_id: string;
  name: string;
  token_hash: string;
  token_prefix: string;
  created_at: string;
  last_used_at: string | null;
  /** When the token stops working (migration 0011); null only if written by hand: such a token works never. */
  expires_at: string | null;
}
