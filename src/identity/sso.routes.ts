import { AppError, messages } from '../errors.ts';
import { clientKey } from '../http/client-key.ts';
import { adminErrors, type RoutePlugin } from '../http/schemas.ts';
import type { SessionCookie } from '../http/session-cookie.ts';
import type { AdminGate } from './admin-gate.ts';
import type { MemberService } from './member.service.ts';
import type { SessionService } from './session.service.ts';
import type { SsoService } from './sso.service.ts';

export interface SsoRouteDeps {
  /** Undefined while FLAGPOST_OIDC_ISSUER is not set. */
  sso: SsoService | undefined;
  sessions: Pick<SessionService, 'open'>;
  gate: AdminGate;
  cookie: SessionCookie;
  members: Pick<MemberService, 'ownerExists'>;
}

/**
 * The cookie binding a sign-in under way to its browser. SameSite=Lax, unlike the session cookie: the
 * provider's redirect back is a cross-site navigation, which must carry it. Only the callback reads it.
 */
const bindingCookie = (cookie: SessionCookie) => ({
  name: cookie.options.secure ? '__Secure-flagpost_sso' : 'flagpost_sso',
  options: { httpOnly: true, sameSite: 'lax' as const, secure: cookie.options.secure, path: '/admin/v1/sso', maxAge: 600 },
});

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Single sign-on (docs/adr/0032-identity-and-sso.md): what the sign-in page shows, the redirect to the
 * provider and the callback that opens a session.
 */
export const ssoRoutes: RoutePlugin<SsoRouteDeps> = async (app, { sso, sessions, gate, cookie, members }) => {
  const binding = bindingCookie(cookie);
  const configured = (): SsoService => {
    if (!sso) throw new AppError('not_found', messages.ssoNotConfigured);
    return sso;
  };

  app.get(
    '/sso',
    {
      config: { signIn: true },
      schema: {
        summary: 'Whether single sign-on is on, the name of its button, whether passwords are off, and whether an owner exists (the sign-in page)',
        security: [],
        response: {
          200: {
            type: 'object',
            additionalProperties: false,
            required: ['enabled', 'name', 'passwordsOff', 'ownerExists'],
            properties: {
              enabled: { type: 'boolean' },
              name: { type: ['string', 'null'], description: 'The provider\'s name: the button reads "Sign in with <name>"' },
              passwordsOff: { type: 'boolean', description: 'FLAGPOST_SSO_ONLY: passwords sign in only the break-glass owner' },
              ownerExists: {
                type: 'boolean',
                description: 'Whether an owner account exists: until one does, only the admin token signs in, and the sign-in page leads with it',
              },
            },
          },
          ...adminErrors,
        },
      },
    },
    async (_request, reply) => {
      const info = sso?.info ?? { enabled: false, name: null, passwordsOff: false };
      return reply.header('cache-control', 'no-store').send({ ...info, ownerExists: await members.ownerExists() });
    },
  );

  app.get(
    '/sso/start',
    {
      config: { signIn: true },
      schema: {
        summary: 'Start single sign-on: redirects the browser to the identity provider',
        security: [],
        querystring: { type: 'object', properties: { next: { type: 'string', maxLength: 500, description: 'The dashboard path to return to' } } },
        response: { 302: { type: 'null', description: 'To the provider' }, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { url, browserToken } = await configured().begin(request.query.next, clientKey(request.ip));
      return reply.code(302).header('cache-control', 'no-store').header('location', url).setCookie(binding.name, browserToken, binding.options).send();
    },
  );

  app.get(
    '/sso/callback',
    {
      config: { signIn: true },
      schema: {
        summary: "The identity provider's redirect back: opens a session and continues to the dashboard",
        security: [],
        querystring: { type: 'object', properties: { code: { type: 'string' }, state: { type: 'string' } } },
        response: { 200: { type: 'string', description: 'An HTML page that continues to the dashboard' }, ...adminErrors },
      },
    },
    async (request, reply) => {
      const service = configured();
      // A callback is a credential: each one counts against the address until it succeeds.
      const attempt = await gate.reserveAttempt(request);
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
      let done: Awaited<ReturnType<SsoService['complete']>>;
      try {
        done = await service.complete(query, request.cookies[binding.name], clientKey(request.ip));
      } catch (error) {
        // Only a refused callback keeps the count; a member without a role or an unreachable provider does not.
        if (!(error instanceof AppError && error.kind === 'unauthorized')) await attempt.refund();
        throw error;
      }
      await attempt.refund();
      const { user, nextPath } = done;
      const { token } = await sessions.open({ userId: user.id, method: 'sso' });
      // The provider's redirect was cross-site: a SameSite=Strict cookie set now is sent only on a
      // navigation this origin starts, so the page moves on by itself instead of a redirect.
      const target = escapeHtml(nextPath);
      return reply
        .code(200)
        .header('cache-control', 'no-store')
        .header('content-security-policy', "default-src 'none'")
        .header('referrer-policy', 'no-referrer')
        .type('text/html; charset=utf-8')
        .setCookie(cookie.name, token, cookie.options)
        .clearCookie(binding.name, { ...binding.options, maxAge: undefined })
        .send(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${target}"><title>Signed in</title></head>` +
            `<body><p>Signed in. <a href="${target}">Continue to Flagpost</a></p></body></html>`,
        );
    },
  );
};
