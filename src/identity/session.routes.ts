import { AppError } from '../errors.ts';
import { clientKey } from '../http/client-key.ts';
import { adminErrors, isoTimestamp, noContent, type RoutePlugin } from '../http/schemas.ts';
import type { SessionCookie } from '../http/session-cookie.ts';
import { ROLES } from './actor.ts';
import type { AdminGate } from './admin-gate.ts';
import type { SessionService } from './session.service.ts';
import type { SsoService } from './sso.service.ts';

/** How the sign-in route checks an e-mail and password, and audits sign-ins (the accounts capability). */
export interface PasswordSignIn {
  /**
   * The user of a right e-mail and password: throws 401 otherwise, or 429 past the account's limit.
   * `client` is the request's client key, for the audit log.
   */
  signIn(email: string, password: string, client: string): Promise<{ id: string }>;
  recordAdminTokenSignIn(succeeded: boolean, client: string): Promise<void>;
}

/** Bounds the password work of this process (PasswordWork of the accounts capability). */
export interface PasswordWorkBound {
  run<T>(client: string, work: () => Promise<T>): Promise<T>;
}

export interface SessionRouteDeps {
  sessions: SessionService;
  gate: AdminGate;
  cookie: SessionCookie;
  passwords: PasswordSignIn;
  passwordWork: PasswordWorkBound;
  /** Single sign-on, when configured: signing out of its sessions offers the provider's logout. */
  sso: Pick<SsoService, 'endSessionUrl'> | undefined;
}

const sessionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['expiresAt'],
  properties: {
    expiresAt: { ...isoTimestamp, type: ['string', 'null'], description: 'When the session ends; null when the bearer token authenticated the request' },
    role: { type: 'string', enum: ROLES, description: 'The role the request acts with (the admin token: owner)' },
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
export const sessionRoutes: RoutePlugin<SessionRouteDeps> = async (app, { sessions, gate, cookie, passwords, passwordWork, sso }) => {
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
      const client = clientKey(request.ip);
      let opener: { userId: string } | { adminTokenGeneration: string };
      if (adminToken !== undefined && email === undefined && password === undefined) {
        try {
          await gate.signIn(request, adminToken);
        } catch (error) {
          if (error instanceof AppError && error.kind === 'unauthorized') await passwords.recordAdminTokenSignIn(false, client);
          throw error;
        }
        await passwords.recordAdminTokenSignIn(true, client);
        opener = { adminTokenGeneration: gate.adminTokenGeneration };
      } else if (adminToken === undefined && email !== undefined && password !== undefined) {
        // Bounded work first (429/503 without counting), then the address's attempt is counted before
        // the scrypt check and given back when the password was right (issue 20).
        const user = await passwordWork.run(client, async () => {
          const attempt = await gate.reserveAttempt(request);
          try {
            const found = await passwords.signIn(email, password, client);
            await attempt.refund();
            return found;
          } catch (error) {
            // Only a wrong password keeps the address's count; a refusal of the account gives it back.
            if (!(error instanceof AppError && error.kind === 'unauthorized')) await attempt.refund();
            throw error;
          }
        });
        opener = { userId: user.id };
      } else {
        throw AppError.validation([{ field: 'body', reason: 'send either token, or email and password' }]);
      }
      const { session, token } = await sessions.open(opener);
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
    {
      config: { access: 'any' },
      schema: {
        summary: "Sign out: end the session of the cookie (and, for a single sign-on session, answer the provider's logout URL)",
        response: {
          200: {
            type: 'object',
            additionalProperties: false,
            required: ['endSessionUrl'],
            properties: { endSessionUrl: { type: 'string', description: "The identity provider's logout, to sign out there too" } },
          },
          204: noContent,
          ...adminErrors,
        },
      },
    },
    async (request, reply) => {
      const token = request.cookies[cookie.name];
      const closed = token ? await sessions.close(token) : undefined;
      const endSessionUrl = closed?.signInMethod === 'sso' && sso ? await sso.endSessionUrl() : undefined;
      reply.clearCookie(cookie.name, { ...cookie.options, maxAge: undefined }).header('cache-control', 'no-store');
      return endSessionUrl ? reply.code(200).send({ endSessionUrl }) : reply.code(204).send();
    },
  );
};
