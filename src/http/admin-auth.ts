import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, messages } from '../errors.ts';
import { clientKey } from './client-key.ts';

/** What the admin scope needs to know about a presented token. */
export interface AdminCredentials {
  verify(token: string): boolean;
  /** Names the current admin token (not the token): a session opened with another one is over. */
  readonly generation: string;
}

/**
 * Who makes an admin request, as the audit log records it: the admin token (the bootstrap and automation
 * credential), a user signed in to the dashboard, or a user's personal access token; `anonymous` is
 * the client of a failed sign-in, known only by its client key.
 */
export interface Actor {
  type: 'admin_token' | 'user' | 'access_token' | 'anonymous';
  /** The user's id; null for the admin token and anonymous clients. */
  id: string | null;
  /** What the log shows: an e-mail address, a token's name, "admin token", or a client key. */
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
  /** For a session opened with the admin token: which token (AdminCredentials.generation). */
  adminTokenGeneration: string | null;
}

/** Finds the live session of a session cookie's value. */
export interface AdminSessions {
  find(token: string): Promise<AdminSession | undefined>;
}

/** One counted attempt; `retryAfter` > 0 when it went over the limit and must not go ahead. */
export interface Attempt {
  retryAfter: number;
  /** Gives the attempt back (it succeeded); nothing for a refused one. */
  refund(): Promise<void>;
}

/**
 * The per-client counter of failed credentials (docs/adr/0022-sign-in-under-attack.md), shared by every
 * instance. `client` is a client key (http/client-key.ts): IPv6 counts per /64.
 */
export interface AddressThrottle {
  reserve(client: string): Promise<Attempt>;
  clear(client: string): Promise<void>;
}

export interface AdminGateOptions {
  credentials: AdminCredentials;
  sessions: AdminSessions;
  principals: AdminPrincipals;
  throttle: AddressThrottle;
  /** Name of the session cookie (see session-cookie.ts). */
  cookieName: string;
  /** The public URL's origin: cookie-authenticated writes must come from it (or from the Host's own origin). */
  publicOrigin: string;
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

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The door of the admin scope. A request carries `Authorization: Bearer <admin token>` or the session
 * cookie of a dashboard sign-in (issue 9); anything else is a 401 JSON. A cookie-authenticated write
 * must also carry an `Origin` of Flagpost itself (a cross-site request forgery defence on top of
 * SameSite=Strict). Every presented, wrong credential counts against its client key (IPv6 per /64);
 * past the limit within the window, wrong credentials get 429 with Retry-After, so that none can be
 * guessed (issue 8). A missing credential counts nothing, and a valid one is accepted whatever others
 * did from the same address (issue 20). The sign-in routes count the same way. Counts are shared by
 * every instance (docs/adr/0022-sign-in-under-attack.md).
 */
export class AdminGate {
  constructor(private readonly options: AdminGateOptions) {}

  /** onRequest hook of the admin scope. */
  readonly check = async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    request.adminSession = null;
    request.actor = ADMIN_TOKEN_ACTOR;
    request.role = 'viewer';
    request.member = null;
    if (request.routeOptions.config?.signIn) return;
    const principal = await this.authenticate(request);
    if (!principal) return this.refuse(request, this.presentsCredential(request));
    request.actor = principal.actor;
    request.role = principal.role;
    request.member = principal.member;
    // Only the admin token clears the address's failures: a member's own valid credential must not
    // reset the count of guesses made from the same address.
    if (principal === ADMIN_TOKEN_PRINCIPAL) await this.options.throttle.clear(clientKey(request.ip));
    // An unknown path answers 404 whatever the role, so that roles tell nothing about which routes exist.
    if (!request.is404) await this.authorize(request, principal);
  };

  private presentsCredential(request: FastifyRequest): boolean {
    return request.headers.authorization !== undefined || Boolean(request.cookies?.[this.options.cookieName]);
  }

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
    // A session of an admin token that was rotated since is over (issue 20).
    if (session.userId === null && session.adminTokenGeneration !== this.options.credentials.generation) return undefined;
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

  /**
   * For the sign-in routes: counts one attempt of the request's client key before the password or
   * token work it guards (429 past the limit). The caller refunds it when the attempt succeeds.
   */
  async reserveAttempt(request: FastifyRequest): Promise<Attempt> {
    const attempt = await this.options.throttle.reserve(clientKey(request.ip));
    if (attempt.retryAfter > 0) throw new AppError('rate_limited', messages.tooManyRequests, { retryAfterSeconds: attempt.retryAfter });
    return attempt;
  }

  /**
   * For the sign-in route: the admin token of its body. The right token is accepted from any address
   * and clears its count; a wrong one counts like a wrong bearer token (401, or 429 past the limit).
   */
  async signIn(request: FastifyRequest, token: string): Promise<void> {
    if (this.options.credentials.verify(token)) return this.options.throttle.clear(clientKey(request.ip));
    return this.refuse(request, true);
  }

  /** The admin token's generation, recorded with the sessions it opens. */
  get adminTokenGeneration(): string {
    return this.options.credentials.generation;
  }

  private sameOrigin(request: FastifyRequest): boolean {
    const origin = request.headers.origin;
    if (!origin) return false;
    return origin === this.options.publicOrigin || origin === `${request.protocol}://${request.host}`;
  }

  /** 401; a presented credential counts first, and past the limit the answer is 429 with Retry-After. */
  private async refuse(request: FastifyRequest, presented: boolean): Promise<never> {
    if (presented) {
      const attempt = await this.options.throttle.reserve(clientKey(request.ip));
      if (attempt.retryAfter > 0) throw new AppError('rate_limited', messages.tooManyRequests, { retryAfterSeconds: attempt.retryAfter });
    }
    throw new AppError('unauthorized', messages.adminUnauthorized);
  }
}
