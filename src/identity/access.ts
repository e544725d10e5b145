// The pure rules of who may call which admin route (docs/adr/0021-accounts-and-roles.md, roles per
// project: docs/adr/0033-project-roles.md), checked by the admin gate (admin-gate.ts) and table-tested in
// access.test.ts. No I/O: the gate gathers the facts.
import type { Principal, Role } from './actor.ts';

/**
 * What a route requires (its config `access`); by default reads need `viewer` and writes `editor`.
 * `project_admin`: manages a project's environments, keys and protection (a project admin, or an
 * instance editor or owner); `submissions`: editors, and viewers when an owner allows it; `user`: a
 * user (not the admin token); `session`: a user signed in to the dashboard (not an access token, which
 * must not mint others); `admin_token`: the admin token only; `any`: any valid credential.
 */
export type Access = Exclude<Role, 'none'> | 'project_admin' | 'submissions' | 'user' | 'session' | 'admin_token' | 'any';

/** A member's role on one project. */
export type ProjectRole = 'viewer' | 'editor' | 'admin';
export const PROJECT_ROLES: readonly ProjectRole[] = ['viewer', 'editor', 'admin'];

/**
 * Which project a route acts on (route config `project`), so that roles per project apply: a path
 * parameter holding a project key, or one holding a form key (the form's project); `listing` is a
 * route that lists across projects and shows each caller only theirs (the handler filters with
 * `request.projects`). Routes with a `:projectKey` or `:formKey` parameter get the first two by
 * themselves (AdminGate.classify); a route that names none is instance-wide.
 */
export type ProjectScope = { projectParam: string } | { formParam: string } | 'listing';

/** Why a request was refused, in the order a client meets them; `hidden` is a 404 (the project's name is not told). */
export type Refusal = 'needsUser' | 'needsSession' | 'needsAdminToken' | 'roleForbidden' | 'hidden';

/**
 * What a principal may do, as a number: none 0, viewer 1, editor 2, project admin 3, owner 4. An
 * instance editor manages environments and keys as before roles per project, so ranks as a project
 * admin everywhere; the effective level on a project is the higher of the instance's and the project's.
 */
const INSTANCE_LEVEL: Record<Role, number> = { none: 0, viewer: 1, editor: 3, owner: 4 };
const PROJECT_LEVEL: Record<ProjectRole, number> = { viewer: 1, editor: 2, admin: 3 };
const NEEDED: Record<Exclude<Access, 'submissions' | 'user' | 'session' | 'admin_token' | 'any'>, number> = {
  viewer: 1,
  editor: 2,
  project_admin: 3,
  owner: 4,
};
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Methods that change nothing: they need only `viewer` by default, and no Origin check for a cookie. */
export const isSafeMethod = (method: string): boolean => SAFE_METHODS.has(method);

/** `role` is at least `least` (instance roles). */
export const atLeast = (role: Role, least: Role): boolean => INSTANCE_LEVEL[role] >= INSTANCE_LEVEL[least];

/** The access a route requires: the one it declares, else by its method. */
export function accessOf(method: string, declared: Access | undefined): Access {
  return declared ?? (isSafeMethod(method) ? 'viewer' : 'editor');
}

/** The level a principal acts with on a project where its member has `projectRole` (if any). */
export function levelOn(role: Role, projectRole: ProjectRole | undefined): number {
  return Math.max(INSTANCE_LEVEL[role], projectRole ? PROJECT_LEVEL[projectRole] : 0);
}

/** The instance-wide level of a role. */
export const instanceLevel = (role: Role): number => INSTANCE_LEVEL[role];

/** The role a level acts as where a role is read (what viewers may not see: viewer-redaction.ts). */
export function roleOfLevel(level: number): Role {
  if (level >= 4) return 'owner';
  if (level >= 2) return 'editor';
  return level === 1 ? 'viewer' : 'none';
}

/** Whether the `submissions` access needs the owners' "viewers see submissions" setting at this level. */
export const needsViewerSetting = (access: Access, level: number): boolean => access === 'submissions' && level === 1;

/**
 * Undefined when `principal`, acting at `level` (its instance level, or its level on the route's
 * project), may call a route requiring `access`, else why not. A project route that the member has no
 * role on at all is `hidden`: answered like a project that does not exist. `viewersSeeSubmissions` is
 * the owners' setting (read only when needsViewerSetting says so).
 */
export function refusalOf(
  access: Access,
  principal: Pick<Principal, 'actor'>,
  level: number,
  scoped: boolean,
  viewersSeeSubmissions = false,
): Refusal | undefined {
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
  }
  if (scoped && level === 0) return 'hidden';
  if (access === 'submissions') return level >= 2 || (level === 1 && viewersSeeSubmissions) ? undefined : 'roleForbidden';
  return level >= NEEDED[access] ? undefined : 'roleForbidden';
}
