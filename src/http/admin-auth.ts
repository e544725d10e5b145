import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, messages } from '../errors.ts';

/** What the admin scope needs to know about a presented token. */
export interface AdminCredentials {
  verify(token: string): boolean;
}

/**
 * Who makes an admin request, as the audit log records it: the admin token (the bootstrap and automation
 * credential), a user signed in to the dashboard, or a user's personal access token.
 */
export interface Actor {
  type: 'admin_token' | 'user' | 'access_token';
  /** The user's id; null for the admin token. */
  id: string | null;
  /** What the log shows: an e-mail address, a token's name, or "admin token". */
  label: string;
}

export const ADMIN_TOKEN_ACTOR: Actor = { type: 'admin_token', id: null, label: 'admin token' };

/** What a member may do (issue 13, docs/adr/0021-accounts-and-roles.md); the admin token acts as an owner. */
export type Role = 'owner' | 'editor' | 'viewer';

/** Who a request acts as, and with which role. */
export interface Principal {
  actor: Actor;
  role: Role;
  /** The user behind a session or an access token; null for the admin token. */
  member: { id: string; email: string } | null;
}

export const ADMIN_TOKEN_PRINCIPAL: Principal = { actor: ADMIN_TOKEN_ACTOR, role: 'owner', member: null };

/**
 * What a route requires (route config `access`); by default reads need `viewer` and writes `editor`.
 * `submissions`: editors, and viewers when an owner allows it; `user`: a user (not the admin token);
 * `session`: a user signed in to the dashboard (not an access token, which must not mint others);
 * `admin_token`: the admin token only; `any`: any valid credential.
 */
export type Access = Role | 'submissions' | 'user' | 'session' | 'admin_token' | 'any';

/** Finds who a session's user or a personal access token is, with their current role. */
export interface AdminPrincipals {
  ofUser(userId: string): Promise<Principal | undefined>;
  ofAccessToken(token: string): Promise<Principal | undefined>;
  viewersSeeSubmissions(): Promise<boolean>;
}

const RANK: Record<Role, number> = { viewer: 1, editor: 2, owner: 3 };

/** A dashboard session as the admin scope sees it. */
export interface AdminSession {
  expiresAt: string;
  /** The signed-in user; null for a session opened with the admin token. */
  userId: string | null;
}

/** Finds the live session of a session cookie's value. */
export interface AdminSessions {
  find(token: string): Promise<AdminSession | undefined>;
}

export interface AdminLockout {
  /** Failed tokens one client address may present within `windowMs` before it is locked out for the window. */
  maxFailures: number;
  /** How long the failures are remembered, and how long a lockout lasts, in ms. */
  windowMs: number;
}

export interface AdminGateOptions {
  credentials: AdminCredentials;
  sessions: AdminSessions;
  principals: AdminPrincipals;
  lockout: AdminLockout;
  /** Name of the session cookie (see session-cookie.ts). */
  cookieName: string;
  /** The public URL's origin: cookie-authenticated writes must come from it (or from the Host's own origin). */
  publicOrigin: string;
  now?: () => number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The dashboard session that authenticated this admin request; null for the bearer token. */
    adminSession: AdminSession | null;
    /** Who this admin request acts as (set once the gate let it in). */
    actor: Actor;
    /** The role this admin request has. */
    role: Role;
    /** The user this admin request acts for; null for the admin token. */
    member: { id: string; email: string } | null;
  }
  interface FastifyContextConfig {
    /** What the route requires; by default `viewer` for reads and `editor` for writes. */
    access?: Access;
    /** The sign-in route checks the token of its body itself (AdminGate.signIn). */
    signIn?: boolean;
  }
}

/** Most client addresses remembered at once; the oldest are forgotten first. */
const MAX_TRACKED = 10_000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The door of the admin scope. A request carries `Authorization: Bearer <admin token>` or the session
 * cookie of a dashboard sign-in (issue 9); anything else is a 401 JSON. A cookie-authenticated write
 * must also carry an `Origin` of Flagpost itself (a cross-site request forgery defence on top of
 * SameSite=Strict). A client address that presents `maxFailures` wrong or missing credentials within
 * the window is locked out for the window (429 with Retry-After, even with the right token), so the
 * token cannot be guessed (issue 8); the sign-in form counts the same way. Counts are per instance.
 */
export class AdminGate {
  private readonly failures = new Map<string, { count: number; since: number }>();
  private readonly now: () => number;

  constructor(private readonly options: AdminGateOptions) {
    this.now = options.now ?? Date.now;
  }

  /** onRequest hook of the admin scope. */
  readonly check = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    request.adminSession = null;
    request.actor = ADMIN_TOKEN_ACTOR;
    request.role = 'viewer';
    request.member = null;
    if (request.routeOptions.config?.signIn) return;
    this.refuseLockedOut(request, reply);
    const principal = await this.authenticate(request);
    if (!principal) return this.failed(request);
    request.actor = principal.actor;
    request.role = principal.role;
    request.member = principal.member;
    // Only the admin token clears the address's failures: a member's own valid credential must not
    // reset the count of guesses made from the same address.
    if (principal === ADMIN_TOKEN_PRINCIPAL) this.succeeded(request);
    // An unknown path answers 404 whatever the role, so that roles tell nothing about which routes exist.
    if (!request.is404) await this.authorize(request, principal);
  };

  private async authenticate(request: FastifyRequest): Promise<Principal | undefined> {
    const header = request.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match) return undefined;
      const token = match[1]!;
      if (this.options.credentials.verify(token)) return ADMIN_TOKEN_PRINCIPAL;
      return this.options.principals.ofAccessToken(token);
    }
    const cookie = request.cookies?.[this.options.cookieName];
    const session = cookie ? await this.options.sessions.find(cookie) : undefined;
    if (!session) return undefined;
    const principal = session.userId === null ? ADMIN_TOKEN_PRINCIPAL : await this.options.principals.ofUser(session.userId);
    if (!principal) return undefined;
    if (!SAFE_METHODS.has(request.method) && !this.sameOrigin(request)) throw new AppError('forbidden', messages.crossSiteRefused);
    request.adminSession = session;
    return principal;
  }

  /** The route's `access` against the principal's role (403 when it falls short). */
  private async authorize(request: FastifyRequest, principal: Principal): Promise<void> {
    const access: Access = request.routeOptions.config?.access ?? (SAFE_METHODS.has(request.method) ? 'viewer' : 'editor');
    if (access === 'any') return;
    if (access === 'user') {
      if (principal.actor.type === 'admin_token') throw new AppError('forbidden', messages.needsUser);
      return;
    }
    if (access === 'session') {
      if (principal.actor.type !== 'user') throw new AppError('forbidden', principal.actor.type === 'admin_token' ? messages.needsUser : messages.needsSession);
      return;
    }
    if (access === 'admin_token') {
      if (principal.actor.type !== 'admin_token') throw new AppError('forbidden', messages.needsAdminToken);
      return;
    }
    if (access === 'submissions') {
      if (RANK[principal.role] >= RANK.editor) return;
      if (principal.role === 'viewer' && (await this.options.principals.viewersSeeSubmissions())) return;
      throw new AppError('forbidden', messages.roleForbidden);
    }
    if (RANK[principal.role] < RANK[access]) throw new AppError('forbidden', messages.roleForbidden);
  }

  /** For the sign-in route: refuses a locked-out client address (429). */
  checkLockout(request: FastifyRequest, reply: FastifyReply): void {
    this.refuseLockedOut(request, reply);
  }

  /**
   * For the sign-in routes: a wrong password or invitation counts like a wrong token; throws `error`. A
   * member's successful sign-in clears nothing: the failures expire with the window (only the admin token clears them).
   */
  signInFailed(request: FastifyRequest, error: AppError): never {
    this.count(request);
    throw error;
  }

  /** For the sign-in route: the admin token of its body, counted like a bearer token. */
  signIn(request: FastifyRequest, reply: FastifyReply, token: string): void {
    this.refuseLockedOut(request, reply);
    if (this.options.credentials.verify(token)) return this.succeeded(request);
    this.failed(request);
  }

  private sameOrigin(request: FastifyRequest): boolean {
    const origin = request.headers.origin;
    if (!origin) return false;
    return origin === this.options.publicOrigin || origin === `${request.protocol}://${request.host}`;
  }

  private refuseLockedOut(request: FastifyRequest, reply: FastifyReply): void {
    const entry = this.failures.get(request.ip);
    if (!entry) return;
    if (this.now() - entry.since >= this.options.lockout.windowMs) {
      this.failures.delete(request.ip);
      return;
    }
    if (entry.count >= this.options.lockout.maxFailures) {
      reply.header('retry-after', String(Math.ceil((entry.since + this.options.lockout.windowMs - this.now()) / 1000)));
      throw new AppError('rate_limited', messages.tooManyRequests);
    }
  }

  private succeeded(request: FastifyRequest): void {
    // Only the holder of the token (or of a session it opened) gets here, so it cannot help a guesser.
    this.failures.delete(request.ip);
  }

  private failed(request: FastifyRequest): never {
    this.count(request);
    throw new AppError('unauthorized', messages.adminUnauthorized);
  }

  private count(request: FastifyRequest): void {
    const entry = this.failures.get(request.ip);
    if (entry) entry.count++;
    else {
      if (this.failures.size >= MAX_TRACKED) this.failures.delete(this.failures.keys().next().value!);
      this.failures.set(request.ip, { count: 1, since: this.now() });
    }
  }
}
