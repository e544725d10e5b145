/** A signed-in dashboard session. The token itself lives only in the browser's cookie. */
export interface Session {
  id: string;
  createdAt: string;
  expiresAt: string;
  /** The signed-in user; null when the admin token opened the session. */
  userId: string | null;
  /** When the admin token opened the session: which token (AdminTokenService.generation). */
  adminTokenGeneration: string | null;
  /** How it was opened; null for a session of before migration 0015. */
  signInMethod: SignInMethod | null;
}

/** How someone signed in. */
export type SignInMethod = 'password' | 'admin_token' | 'sso';
