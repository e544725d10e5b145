// Who an admin request acts as (issue 13, docs/adr/0021-accounts-and-roles.md): the actor the audit log
// records, the member behind it and the instance-wide role it acts with.

/**
 * Who makes an admin request, as the audit log records it: the admin token (the bootstrap and automation
 * credential), a user signed in to the dashboard, or a user's personal access token; `anonymous` is
 * the client of a failed sign-in, known only by its client key. A `form_token` (a form's read-only token
 * for integrations, issue 34) reads and never writes, so the log never records one.
 */
export interface Actor {
  type: 'admin_token' | 'user' | 'access_token' | 'form_token' | 'anonymous' | 'system';
  /** The user's id; null for the admin token and anonymous clients. */
  id: string | null;
  /** What the log shows: an e-mail address, a token's name, "admin token", or a client key. */
  label: string;
}

export const ADMIN_TOKEN_ACTOR: Actor = { type: 'admin_token', id: null, label: 'admin token' };

/**
 * What a member may do across the instance; the admin token acts as an owner. `none`: nothing beyond the
 * projects the member has a role on (docs/adr/0033-project-roles.md).
 */
export type Role = 'owner' | 'editor' | 'viewer' | 'none';
export const ROLES: readonly Role[] = ['owner', 'editor', 'viewer', 'none'];

/** A member as a request sees it. */
export interface Member {
  id: string;
  email: string;
}

/** Who a request acts as, and with which role. */
export interface Principal {
  actor: Actor;
  role: Role;
  /** The user behind a session or an access token; null for the admin token. */
  member: Member | null;
  /** A form read token's form: the principal reads that form's submissions and nothing else. */
  readsForm?: string;
  /** Records a form read token's use, once the request is let in. */
  markUsed?: () => Promise<void>;
}

export const ADMIN_TOKEN_PRINCIPAL: Principal = { actor: ADMIN_TOKEN_ACTOR, role: 'owner', member: null };
