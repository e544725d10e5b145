/** A member's identity at an OpenID provider (migration 0015): one per issuer and subject. */
export interface UserIdentitiesTable {
  issuer: string;
  subject: string;
  user_id: string;
  created_at: string;
  last_sign_in_at: string;
}

/** A single sign-on under way (migration 0015): single use, expiring, bound to its browser. */
export interface SsoLoginsTable {
  /** SHA-256 of the `state` sent to the provider. */
  state_hash: string;
  /** SHA-256 of the random value of the browser's sign-in cookie. */
  browser_hash: string;
  nonce: string;
  /** The PKCE code verifier (RFC 7636), sent only with the code exchange. */
  code_verifier: string;
  /** The dashboard path to return to. */
  next_path: string;
  created_at: string;
  expires_at: string;
}
