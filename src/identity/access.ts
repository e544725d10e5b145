// The pure rules of who may call which admin route (docs/adr/0021-accounts-and-roles.md), checked by
// the admin gate (admin-gate.ts) and table-tested in access.test.ts. No I/O: the gate gathers the facts.
import type { Principal, Role } from './actor.ts';

/**
 * What a route requires (its config `access`); by default reads need `viewer` and writes `editor`.
 * `submissions`: editors, and viewers when an owner allows it; `user`: a user (not the admin token);
 * `session`: a user signed in to the dashboard (not an access token, which must not mint others);
 * `admin_token`: the admin token only; `any`: any valid credential.
 */
export type Access = Role | 'submissions' | 'user' | 'session' | 'admin_token' | 'any';

/** Why a request was refused, in the order a client meets them; each is a 403 with its message. */
export type Refusal = 'needsUser' | 'needsSession' | 'needsAdminToken' | 'roleForbidden';

const RANK: Record<Role, number> = { viewer: 1, editor: 2, owner: 3 };
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Methods that change nothing: they need only `viewer` by default, and no Origin check for a cookie. */
export const isSafeMethod = (method: string): boolean => SAFE_METHODS.has(method);

/** `role` is at least `least`. */
export const atLeast = (role: Role, least: Role): boolean => RANK[role] >= RANK[least];

/** The access a route requires: the one it declares, else by its method. */
export function accessOf(method: string, declared: Access | undefined): Access {
  return declared ?? (isSafeMethod(method) ? 'viewer' : 'editor');
}

/** Whether the `submissions` access needs the owners' "viewers see submissions" setting for this role. */
export const needsViewerSetting = (access: Access, role: Role): boolean => access === 'submissions' && role === 'viewer';

/**
 * Undefined when `principal` may call a route requiring `access`, else why not. `viewersSeeSubmissions`
 * is the owners' setting (read only when needsViewerSetting says so).
 */
export function refusalOf(access: Access, principal: Pick<Principal, 'actor' | 'role'>, viewersSeeSubmissions = false): Refusal | undefined {
  const type = principal.actor.type;
  switch (access) {
    case 'any':
      return undefined;
    case 'user':
      return type === 'admin_token' ? 'needsUser' : undefined;
    case 'session':
      if (type === 'user') return undefined;
      return type === 'admin_token' ? 'needsUser' : 'needsSession';
    case 'admin_token':
      return type === 'admin_token' ? undefined : 'needsAdminToken';
    case 'submissions':
      if (atLeast(principal.role, 'editor')) return undefined;
      return principal.role === 'viewer' && viewersSeeSubmissions ? undefined : 'roleForbidden';
    default:
      return atLeast(principal.role, access) ? undefined : 'roleForbidden';
  }
}
