import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, messages } from '../errors.ts';

/** What the admin scope needs to know about a presented token. */
export interface AdminCredentials {
  verify(token: string): boolean;
}

export interface AdminLockout {
  /** Failed tokens one client address may present within `windowMs` before it is locked out. */
  maxFailures: number;
  /** How long the failures are remembered, and how long a lockout lasts, in ms. */
  windowMs: number;
}

/** Most client addresses remembered at once; the oldest are forgotten first. */
const MAX_TRACKED = 10_000;

/**
 * onRequest hook for the admin scope: `Authorization: Bearer <admin token>` or 401 JSON. A client
 * address that presents `maxFailures` wrong or missing tokens within the window is locked out for the
 * window (429 with Retry-After, even with the right token), so the token cannot be guessed (issue 8).
 * The right token before the lockout clears the count. Counts are per instance (in memory).
 */
export function adminAuth(credentials: AdminCredentials, lockout: AdminLockout, now: () => number = Date.now) {
  const failures = new Map<string, { count: number; since: number }>();
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const ip = request.ip;
    let entry = failures.get(ip);
    if (entry && now() - entry.since >= lockout.windowMs) {
      failures.delete(ip);
      entry = undefined;
    }
    if (entry && entry.count >= lockout.maxFailures) {
      reply.header('retry-after', String(Math.ceil((entry.since + lockout.windowMs - now()) / 1000)));
      throw new AppError('rate_limited', messages.tooManyRequests);
    }
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (match && credentials.verify(match[1]!)) {
      // Only the holder of the token can do this, so it cannot help a guesser.
      failures.delete(ip);
      return;
    }
    if (entry) entry.count++;
    else {
      if (failures.size >= MAX_TRACKED) failures.delete(failures.keys().next().value!);
      failures.set(ip, { count: 1, since: now() });
    }
    throw new AppError('unauthorized', messages.adminUnauthorized);
  };
}
