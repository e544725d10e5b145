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

/** A dashboard session as the admin scope sees it. */
export interface AdminSession {
  expiresAt: string;
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
  }
  interface FastifyContextConfig {
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
    if (request.routeOptions.config?.signIn) return;
    this.refuseLockedOut(request, reply);
    const header = request.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (match && this.options.credentials.verify(match[1]!)) return this.succeeded(request);
      return this.failed(request);
    }
    const cookie = request.cookies?.[this.options.cookieName];
    const session = cookie ? await this.options.sessions.find(cookie) : undefined;
    if (!session) return this.failed(request);
    if (!SAFE_METHODS.has(request.method) && !this.sameOrigin(request)) throw new AppError('forbidden', messages.crossSiteRefused);
    request.adminSession = session;
    this.succeeded(request);
  };

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
    const entry = this.failures.get(request.ip);
    if (entry) entry.count++;
    else {
      if (this.failures.size >= MAX_TRACKED) this.failures.delete(this.failures.keys().next().value!);
      this.failures.set(request.ip, { count: 1, since: this.now() });
    }
    throw new AppError('unauthorized', messages.adminUnauthorized);
  }
}
