import type { AdminGate } from '../http/admin-auth.ts';
import { adminErrors, isoTimestamp, noContent, type RoutePlugin } from '../http/schemas.ts';
import type { SessionCookie } from '../http/session-cookie.ts';
import type { SessionService } from './session.service.ts';

export interface SessionRouteDeps {
  sessions: SessionService;
  gate: AdminGate;
  cookie: SessionCookie;
}

const sessionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['expiresAt'],
  properties: {
    expiresAt: { ...isoTimestamp, type: ['string', 'null'], description: 'When the session ends; null when the bearer token authenticated the request' },
  },
} as const;

/**
 * Dashboard sign-in (issue 9): the admin token is exchanged once for a session cookie, so that the
 * browser never keeps the token. Registered in the admin scope: every other admin route accepts the
 * cookie as well as the bearer token.
 */
export const sessionRoutes: RoutePlugin<SessionRouteDeps> = async (app, { sessions, gate, cookie }) => {
  app.post(
    '/sessions',
    {
      config: { signIn: true },
      schema: {
        summary: 'Sign in: exchange the admin token for a session cookie',
        security: [],
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['token'],
          properties: { token: { type: 'string', minLength: 1, maxLength: 1000 } },
        },
        response: { 201: sessionSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      gate.signIn(request, reply, request.body.token);
      const { session, token } = await sessions.open();
      return reply.code(201).header('cache-control', 'no-store').setCookie(cookie.name, token, cookie.options).send({ expiresAt: session.expiresAt });
    },
  );

  app.get(
    '/sessions/current',
    { schema: { summary: 'The session of the request (200 while signed in, 401 otherwise)', response: { 200: sessionSchema, ...adminErrors } } },
    async (request, reply) => reply.header('cache-control', 'no-store').send({ expiresAt: request.adminSession?.expiresAt ?? null }),
  );

  app.delete(
    '/sessions/current',
    { schema: { summary: 'Sign out: end the session of the cookie', response: { 204: noContent, ...adminErrors } } },
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
