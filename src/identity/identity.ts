import { type RoutePlugin } from '../http/schemas.ts';
import type { SessionCookie } from '../http/session-cookie.ts';
import { accountRoutes } from './account.routes.ts';
import type { Accounts } from './account.service.ts';
import type { AdminGate } from './admin-gate.ts';
import type { AdminTokenService } from './admin-token.service.ts';
import type { PasswordWork } from './password-work.ts';
import { projectRoleRoutes } from './project-role.routes.ts';
import type { ProjectRoleService } from './project-role.service.ts';
import { sessionRoutes } from './session.routes.ts';
import type { SessionService } from './session.service.ts';
import type { SignInService } from './sign-in.service.ts';
import type { SignInThrottles } from './sign-in-throttles.ts';
import { ssoRoutes } from './sso.routes.ts';
import type { SsoService } from './sso.service.ts';

/**
 * Who may act, and how they prove it (docs/adr/0032-identity-and-sso.md): the services of the identity
 * capability as compose builds them and app.ts hands them to the admin scope.
 */
export interface Identity {
  /** The admin token (the bootstrap and automation credential). */
  readonly adminToken: AdminTokenService;
  /** Members (and the members settings), invitations, personal access tokens. */
  readonly accounts: Accounts;
  /** Dashboard sign-in sessions. */
  readonly sessions: SessionService;
  /** Attempt counters per account and per client key, shared by every instance. */
  readonly throttles: SignInThrottles;
  /** Password checks under the throttles, and the audit entries of sign-ins. */
  readonly signIns: SignInService;
  /** Bounds the scrypt work of this process. */
  readonly passwordWork: PasswordWork;
  /** The door of the admin scope (registered by app.ts through http/admin-auth.ts). */
  readonly gate: AdminGate;
  /** The dashboard's session cookie. */
  readonly cookie: SessionCookie;
  /** Single sign-on with an OpenID provider; undefined unless FLAGPOST_OIDC_ISSUER is set. */
  readonly sso: SsoService | undefined;
  /** Members' roles on single projects. */
  readonly projectRoles: ProjectRoleService;
}

export interface IdentityRouteDeps {
  identity: Identity;
  publicUrl: string;
}

/** The sign-in, session, member, invitation and access-token routes of the admin scope. */
export const identityRoutes: RoutePlugin<IdentityRouteDeps> = async (app, { identity, publicUrl }) => {
  const { gate, cookie, sessions, signIns, passwordWork, accounts, sso } = identity;
  await app.register(sessionRoutes, { sessions, gate, cookie, passwords: signIns, passwordWork, sso });
  await app.register(ssoRoutes, { sso, sessions, gate, cookie, members: accounts.members });
  await app.register(projectRoleRoutes, { projectRoles: identity.projectRoles });
  await app.register(accountRoutes, { accounts, gate, cookie, sessions, publicUrl, signIns, passwordWork });
};
