import { FormReadTokenService, FormReadTokenStore, type FormService } from '../forms/index.ts';
import { sessionCookieOf } from '../http/session-cookie.ts';
import {
  AccountStore,
  AdminGate,
  AdminTokenService,
  type Identity,
  openAccounts,
  PasswordWork,
  ProjectRoleService,
  ProjectRoleStore,
  SessionService,
  SessionStore,
  SignInService,
  SignInThrottles,
  SsoService,
  SsoStore,
  ThrottleStore,
} from '../identity/index.ts';
import type { Composition } from './context.ts';

/** An invitation link is valid for a week. */
const INVITATION_TTL_MS = 7 * 86_400_000;
/** Wrong passwords for one e-mail address before it is refused for the rest of the window (every instance together). */
const SIGN_IN_MAX_FAILURES = 5;
const SIGN_IN_WINDOW_MS = 15 * 60_000;
/** Failed sign-ins the audit log takes per minute and instance; the rest are counted in the next entry. */
const FAILED_SIGN_INS_AUDITED_PER_MINUTE = 60;

/**
 * Who may act, and how they prove it: the admin token, members, invitations and access tokens, sessions,
 * sign-in throttles, single sign-on, project roles and the admin gate, bundled as `Identity`.
 */
export async function composeIdentity(c: Composition, { forms }: { forms: FormService }) {
  const { config, db, handle, audit, clock, log, projects, settings, ports } = c;
  const { service: adminToken, created } = await AdminTokenService.open(db, settings, config.adminToken);
  const sessions = new SessionService({ db, store: new SessionStore(), clock, ttlMs: config.sessionTtlMs });
  const accountStore = new AccountStore(handle.dialect);
  const accounts = openAccounts({
    db,
    store: accountStore,
    settings,
    audit,
    clock,
    invitationTtlMs: INVITATION_TTL_MS,
    scryptCost: ports.scryptCost,
  });
  const throttles = new SignInThrottles({
    db,
    store: new ThrottleStore(),
    clock,
    account: { limit: SIGN_IN_MAX_FAILURES, windowMs: SIGN_IN_WINDOW_MS },
    address: { limit: config.adminLockout.maxFailures, windowMs: config.adminLockout.windowMs },
  });
  const signIns = new SignInService({
    db,
    store: accountStore,
    throttles,
    audit,
    clock,
    failedPerMinute: FAILED_SIGN_INS_AUDITED_PER_MINUTE,
    scryptCost: ports.scryptCost,
    passwordsOff: config.sso?.only ? { breakGlassEmail: config.sso.breakGlassEmail } : undefined,
  });
  const projectRoles = new ProjectRoleService({ db, store: new ProjectRoleStore(), accounts: accountStore, projects, audit, clock });
  const cookie = sessionCookieOf(config.publicUrl, config.sessionTtlMs);
  // Per-form read-only tokens for integrations (issue 34): the gate lets them read their form's submissions.
  const formReadTokens = new FormReadTokenService({ db, store: new FormReadTokenStore(), forms, audit, clock });
  const gate = new AdminGate({
    adminToken,
    sessions,
    accounts,
    throttles,
    projectRoles,
    projects,
    forms,
    formReaders: formReadTokens,
    cookieName: cookie.name,
    publicOrigin: new URL(config.publicUrl).origin,
  });
  const sso = config.sso && new SsoService({ db, store: new SsoStore(), accounts: accountStore, audit, clock, config: config.sso, log, throttles });
  const identity: Identity = {
    adminToken,
    accounts,
    sessions,
    throttles,
    signIns,
    passwordWork: new PasswordWork(config.passwordWork),
    gate,
    cookie,
    sso,
    projectRoles,
  };
  return { identity, createdAdminToken: created, formReadTokens };
}
