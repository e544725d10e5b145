import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { notFound } from './error-handler.ts';

/**
 * What the admin scope asks of every request: who it acts as and whether its route lets them. The
 * identity capability answers (identity/admin-gate.ts, docs/adr/0032-identity-and-sso.md); this file
 * only asks, so that http/ knows no capability.
 */
export interface AdminAuthority {
  /** The request decorations the authority sets on every admin request, with their initial values. */
  readonly requestFields: Readonly<Record<string, unknown>>;
  /** Lets the request in (its decorations set) or throws a 401, 403, 404 or 429 AppError. */
  admit(request: FastifyRequest): Promise<void>;
  /** Completes a route's access configuration as it is registered (which project it acts on). */
  classify(route: RouteOptions): void;
}

/** A credential as the request presents it; `malformed` is an Authorization header that is no bearer token. */
export type PresentedCredential = { kind: 'bearer'; token: string } | { kind: 'cookie'; token: string } | { kind: 'malformed' } | undefined;

/** The request's bearer token, else its session cookie (`cookieName`), else nothing. */
export function presentedCredential(request: FastifyRequest, cookieName: string): PresentedCredential {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match ? { kind: 'bearer', token: match[1]! } : { kind: 'malformed' };
  }
  const cookie = request.cookies?.[cookieName];
  return cookie ? { kind: 'cookie', token: cookie } : undefined;
}

/** The request's Origin is Flagpost's public origin or the Host's own (cookie-authenticated writes need it). */
export function fromOwnOrigin(request: FastifyRequest, publicOrigin: string): boolean {
  const origin = request.headers.origin;
  if (!origin) return false;
  return origin === publicOrigin || origin === `${request.protocol}://${request.host}`;
}

/**
 * Puts the admin scope behind `authority`: every route, and unknown paths too (they need a credential,
 * so that they tell nothing about which routes exist).
 */
export function registerAdminAuth(scope: FastifyInstance, authority: AdminAuthority): void {
  for (const [name, initial] of Object.entries(authority.requestFields)) scope.decorateRequest(name, initial);
  scope.addHook('onRoute', (route) => authority.classify(route));
  const admit = async (request: FastifyRequest, _reply: FastifyReply) => authority.admit(request);
  scope.addHook('onRequest', admit);
  scope.setNotFoundHandler({ preHandler: admit }, notFound);
}
