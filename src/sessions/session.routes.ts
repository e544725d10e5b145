import { AppError, messages } from '../errors.ts';
import type { AdminGate } from '../http/admin-auth.ts';
import { adminErrors, isoTimestamp, noContent, type RoutePlugin } from '../http/schemas.ts';
import type { SessionCookie } from '../http/session-cookie.ts';
import type { SessionService } from './session.service.ts';

/** How the sign-in route checks an e-mail and password (the accounts capability). */
export interface PasswordSignIn {
  /** The user id of a right e-mail and password; undefined otherwise. */
  verify(email: string, password: string): Promise<string | undefined>;
  /** Seconds until this address may try again (per-account throttling), 0 when it may now. */
  retryAfter(email: string): number;
  failed(email: string): void;
  succeeded(email: string): void;
}

export interface SessionRouteDeps {
  sessions: SessionService;
  gate: AdminGate;
  cookie: SessionCookie;
  passwords: PasswordSignIn;
}

const sessionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['expiresAt'],
  properties: {
    expiresAt: { ...isoTimestamp, type: ['string', 'null'], description: 'When the session ends; null when the bearer token authenticated the request' },
    role: { type: 'string', enum: ['owner', 'editor', 'viewer'], description: 'The role the request acts with (the admin token: owner)' },
    user: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['id', 'email'],
      properties: { id: { type: 'string' }, email: { type: 'string' } },
      description: 'The signed-in user; null for the admin token',
    },
  },
} as const;

/**
 * Dashboard sign-in (issue 9): the admin token is exchanged once for a session cookie, so that the
 * browser never keeps the token. Registered in the admin scope: every other admin route accepts the
 * cookie as well as the bearer token.
 */
export const sessionRoutes: RoutePlugin<SessionRouteDeps> = async (app, { sessions, gate, cookie, passwords }) => {
  app.post(
    '/sessions',
    {
      config: { signIn: true },
      schema: {
        summary: 'Sign in with an e-mail address and password, or with the admin token, for a session cookie',
        security: [],
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            token: { type: 'string', minLength: 1, maxLength: 1000, description: 'The admin token' },
            email: { type: 'string', minLength: 1, maxLength: 320 },
            password: { type: 'string', minLength: 1, maxLength: 1000 },
          },
        },
        response: { 201: sessionSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { token: adminToken, email, password } = request.body;
      let userId: string | null = null;
      if (adminToken !== undefined && email === undefined && password === undefined) {
        gate.signIn(request, reply, adminToken);
      } else if (adminToken === undefined && email !== undefined && password !== undefined) {
        gate.checkLockout(request, reply);
        const address = email.trim().toLowerCase();
        const wait = passwords.retryAfter(address);
        if (wait > 0) {
          reply.header('retry-after', String(wait));
          throw new AppError('rate_limited', messages.tooManyRequests);
        }
        const found = await passwords.verify(address, password);
        if (!found) {
          passwords.failed(address);
          throw gate.signInFailed(request, new AppError('unauthorized', messages.invalidCredentials));
        }
        passwords.succeeded(address);
        userId = found;
      } else {
        throw AppError.validation([{ field: 'body', reason: 'send either token, or email and password' }]);
      }
      const { session, token } = await sessions.open(userId);
      return reply.code(201).header('cache-control', 'no-store').setCookie(cookie.name, token, cookie.options).send({ expiresAt: session.expiresAt });
    },
  );

  app.get(
    '/sessions/current',
    {
      config: { access: 'any' },
      schema: { summary: 'The session of the request (200 while signed in, 401 otherwise)', response: { 200: sessionSchema, ...adminErrors } },
    },
    async (request, reply) =>
      reply.header('cache-control', 'no-store').send({
        expiresAt: request.adminSession?.expiresAt ?? null,
        role: request.role,
        user: request.member,
      }),
  );

  app.delete(
    '/sessions/current',
    { config: { access: 'any' }, schema: { summary: 'Sign out: end the session of the cookie', response: { 204: noContent, ...adminErrors } } },
    async (request, reply) => {
      const token = request.cookies[cookie.name];
      if (token) await sessions.close(token);
      return reply
        .code(204)
        .clearCookie(cookie.name, { ...cookie.options, maxAge: undefined })
        .send();
    },
  );
};
