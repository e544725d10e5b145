import type { FastifyRequest, RouteOptions } from 'fastify';
import { AppError, message, messages } from '../errors.ts';
import { type AdminAuthority, fromOwnOrigin, presentedCredential } from '../http/admin-auth.ts';
import { clientKey } from '../http/client-key.ts';
import { type Access, accessOf, instanceLevel, isSafeMethod, levelOn, needsViewerSetting, type ProjectScope, refusalOf, roleOfLevel } from './access.ts';
import { type Actor, ADMIN_TOKEN_ACTOR, ADMIN_TOKEN_PRINCIPAL, type Member, type Principal, type Role } from './actor.ts';
import type { AccessTokenService } from './access-token.service.ts';
import type { MemberService } from './member.service.ts';
import type { AdminTokenService } from './admin-token.service.ts';
import type { FormDirectory, FormReaders, ProjectDirectory } from './project-directory.ts';
import type { ProjectRoleService } from './project-role.service.ts';
import type { Session } from './session.ts';
import type { SessionService } from './session.service.ts';
import type { Attempt, SignInThrottles } from './sign-in-throttles.ts';

export interface AdminGateDeps {
  adminToken: Pick<AdminTokenService, 'verify' | 'generation'>;
  sessions: Pick<SessionService, 'find'>;
  accounts: { members: Pick<MemberService, 'principalOfUser' | 'viewersSeeSubmissions'>; accessTokens: Pick<AccessTokenService, 'principalOfAccessToken'> };
  throttles: Pick<SignInThrottles, 'reserveAddress' | 'clearAddress'>;
  projectRoles: Pick<ProjectRoleService, 'roleOn' | 'rolesOf'>;
  projects: Pick<ProjectDirectory, 'findProject'>;
  forms: FormDirectory;
  formReaders: FormReaders;
  /** Name of the session cookie (http/session-cookie.ts). */
  cookieName: string;
  /** The public URL's origin: cookie-authenticated writes must come from it (or from the Host's own origin). */
  publicOrigin: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The dashboard session that authenticated this admin request; null for a bearer token. */
    adminSession: Session | null;
    /** Who this admin request acts as (set once the gate let it in). */
    actor: Actor;
    /** The role this admin request has. */
    role: Role;
    /** The user this admin request acts for; null for the admin token. */
    member: Member | null;
    /** Which projects this request may see: listings filter with it (docs/adr/0033-project-roles.md). */
    projects: ProjectVisibility;
  }
  interface FastifyContextConfig {
    /** What the route requires; by default `viewer` for reads and `editor` for writes (identity/access.ts). */
    access?: Access;
    /** The sign-in routes check the credential of their body themselves. */
    signIn?: boolean;
    /** A form's read token may call this route for its own form (`:formKey`); it may call no other. */
    formReadToken?: boolean;
    /**
     * Which project the route acts on (identity/access.ts ProjectScope); set by itself for a `:projectKey`
     * or `:formKey` parameter, `instance` for a route that must stay instance-wide despite one.
     */
    project?: ProjectScope | 'instance';
  }
}

/** The projects a request may see: every one, or those of `ids` (its member's project roles). */
export interface ProjectVisibility {
  all: boolean;
  ids: ReadonlySet<string>;
}

const EVERY_PROJECT: ProjectVisibility = { all: true, ids: new Set() };
const NO_PROJECT: ProjectVisibility = { all: false, ids: new Set() };

const REFUSAL_MESSAGES = {
  needsUser: messages.needsUser,
  needsSession: messages.needsSession,
  needsAdminToken: messages.needsAdminToken,
  roleForbidden: messages.roleForbidden,
} as const;

type RouteParams = Record<string, string | undefined>;

/**
 * The door of the admin scope. A request carries `Authorization: Bearer <admin token or personal access
 * token>` or the session cookie of a dashboard sign-in (issue 9); anything else is a 401 JSON. A
 * cookie-authenticated write must also carry an `Origin` of Flagpost itself (a cross-site request
 * forgery defence on top of SameSite=Strict). Every presented, wrong credential counts against its
 * client key (IPv6 per /64); past the limit within the window, wrong credentials get 429 with
 * Retry-After, so that none can be guessed (issue 8). A missing credential counts nothing, and a valid
 * one is accepted whatever others did from the same address (issue 20). Counts are shared by every
 * instance (docs/adr/0022-sign-in-under-attack.md). The route's access is then checked by access.ts.
 */
export class AdminGate implements AdminAuthority {
  readonly requestFields = { adminSession: null, actor: null, role: 'viewer', member: null, projects: null };

  constructor(private readonly deps: AdminGateDeps) {}

  async admit(request: FastifyRequest): Promise<void> {
    request.adminSession = null;
    request.actor = ADMIN_TOKEN_ACTOR;
    request.role = 'viewer';
    request.member = null;
    request.projects = NO_PROJECT;
    if (request.routeOptions.config?.signIn) return;
    const credential = presentedCredential(request, this.deps.cookieName);
    const principal = await this.authenticate(request, credential);
    if (!principal) return this.refuse(request, credential !== undefined);
    request.actor = principal.actor;
    request.role = principal.role;
    request.member = principal.member;
    request.projects = instanceLevel(principal.role) >= 1 ? EVERY_PROJECT : NO_PROJECT;
    // Only the admin token clears the address's failures: a member's own valid credential must not
    // reset the count of guesses made from the same address.
    if (principal === ADMIN_TOKEN_PRINCIPAL) await this.deps.throttles.clearAddress(clientKey(request.ip));
    // An unknown path answers 404 whatever the role, so that roles tell nothing about which routes exist.
    if (request.is404) return;
    if (principal.readsForm !== undefined) {
      this.authorizeReader(request, principal.readsForm);
      return principal.markUsed?.();
    }
    await this.authorize(request, principal);
  }

  private async authenticate(request: FastifyRequest, credential: ReturnType<typeof presentedCredential>): Promise<Principal | undefined> {
    if (credential === undefined || credential.kind === 'malformed') return undefined;
    if (credential.kind === 'bearer') {
      if (this.deps.adminToken.verify(credential.token)) return ADMIN_TOKEN_PRINCIPAL;
      const reader = await this.deps.formReaders.readerOf(credential.token);
      if (reader)
        return {
          actor: { type: 'form_token', id: null, label: `read token ${reader.name} of form ${reader.formKey}` },
          role: 'none',
          member: null,
          readsForm: reader.formKey,
          markUsed: reader.markUsed,
        };
      return this.deps.accounts.accessTokens.principalOfAccessToken(credential.token);
    }
    const session = await this.deps.sessions.find(credential.token);
    if (!session) return undefined;
    // A session of an admin token that was rotated since is over (issue 20).
    if (session.userId === null && session.adminTokenGeneration !== this.deps.adminToken.generation) return undefined;
    const principal = session.userId === null ? ADMIN_TOKEN_PRINCIPAL : await this.deps.accounts.members.principalOfUser(session.userId);
    if (!principal) return undefined;
    if (!isSafeMethod(request.method) && !fromOwnOrigin(request, this.deps.publicOrigin)) throw new AppError('forbidden', messages.crossSiteRefused);
    request.adminSession = session;
    return principal;
  }

  /**
   * A form read token (issue 34): the routes marked `formReadToken` for its own form, reading as a
   * viewer does (viewer-redaction.ts); 403 for every other route and every other form.
   */
  private authorizeReader(request: FastifyRequest, formKey: string): void {
    const config = request.routeOptions.config ?? {};
    if (!config.formReadToken || (request.params as RouteParams).formKey !== formKey) throw new AppError('forbidden', messages.formReadTokenForbidden);
    request.role = 'viewer';
  }

  /**
   * A route with a `:projectKey` parameter acts on that project, one with `:formKey` on the form's
   * project, unless it says otherwise: new routes get roles per project without naming them.
   */
  classify(route: RouteOptions): void {
    const config = (route.config ?? {}) as { project?: ProjectScope | 'instance' };
    if (config.project !== undefined) return;
    const url = route.url;
    if (url.includes(':projectKey')) route.config = { ...config, project: { projectParam: 'projectKey' } };
    else if (url.includes(':formKey')) route.config = { ...config, project: { formParam: 'formKey' } };
  }

  /**
   * The route's access against the principal's level: its instance role's, or on a project route the
   * higher of that and its member's role on the project. 403 when it falls short; 404 on a project the
   * member has no role on at all, as for one that does not exist (its name is not told).
   */
  private async authorize(request: FastifyRequest, principal: Principal): Promise<void> {
    const config = request.routeOptions.config ?? {};
    const access = accessOf(request.method, config.access);
    const scope = config.project === 'instance' ? undefined : config.project;
    let level = instanceLevel(principal.role);
    let hidden: string | undefined;
    // No project role raises an instance editor or owner, or the admin token: no lookup for them.
    if (scope && principal.member && level < 3) {
      if (scope === 'listing') {
        if (!request.projects.all) {
          const roles = await this.deps.projectRoles.rolesOf(principal.member.id);
          request.projects = { all: false, ids: new Set(roles.keys()) };
          for (const role of roles.values()) level = Math.max(level, levelOn('none', role));
        }
      } else {
        const found = await this.projectOf(scope, request.params as RouteParams);
        const projectRole = found.projectId ? await this.deps.projectRoles.roleOn(principal.member.id, found.projectId) : undefined;
        level = levelOn(principal.role, projectRole);
        hidden = found.notFound;
        request.role = roleOfLevel(level);
      }
    }
    const viewersSee = needsViewerSetting(access, level) ? await this.deps.accounts.members.viewersSeeSubmissions() : false;
    const refusal = refusalOf(access, principal, level, hidden !== undefined, viewersSee);
    if (refusal === 'hidden') throw new AppError('not_found', hidden!);
    if (refusal) throw new AppError('forbidden', REFUSAL_MESSAGES[refusal]);
  }

  /** The project a scoped route names, and the 404 message of a project (or form) that is not there. */
  private async projectOf(scope: Exclude<ProjectScope, 'listing'>, params: RouteParams): Promise<{ projectId: string | undefined; notFound: string }> {
    if ('projectParam' in scope) {
      const projectKey = params[scope.projectParam] ?? '';
      return { projectId: (await this.deps.projects.findProject(projectKey))?.id, notFound: message('projectNotFound', { projectKey }) };
    }
    const formKey = params[scope.formParam] ?? '';
    return { projectId: (await this.deps.forms.find(formKey))?.projectId ?? undefined, notFound: message('adminFormNotFound', { formKey }) };
  }

  /**
   * For the sign-in routes: counts one attempt of the request's client key before the password or
   * token work it guards (429 past the limit). The caller refunds it when the attempt succeeds.
   */
  async reserveAttempt(request: FastifyRequest): Promise<Attempt> {
    const attempt = await this.deps.throttles.reserveAddress(clientKey(request.ip));
    if (attempt.retryAfter > 0) throw new AppError('rate_limited', messages.tooManyRequests, { retryAfterSeconds: attempt.retryAfter });
    return attempt;
  }

  /**
   * For the sign-in route: the admin token of its body. The right token is accepted from any address
   * and clears its count; a wrong one counts like a wrong bearer token (401, or 429 past the limit).
   */
  async signIn(request: FastifyRequest, token: string): Promise<void> {
    if (this.deps.adminToken.verify(token)) return this.deps.throttles.clearAddress(clientKey(request.ip));
    return this.refuse(request, true);
  }

  /** The admin token's generation, recorded with the sessions it opens. */
  get adminTokenGeneration(): string {
    return this.deps.adminToken.generation;
  }

  /** 401; a presented credential counts first, and past the limit the answer is 429 with Retry-After. */
  private async refuse(request: FastifyRequest, presented: boolean): Promise<never> {
    if (presented) await this.reserveAttempt(request);
    throw new AppError('unauthorized', messages.adminUnauthorized);
  }
}
