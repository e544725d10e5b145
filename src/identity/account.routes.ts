import { AppError, messages } from '../errors.ts';
import { clientKey } from '../http/client-key.ts';
import { adminErrors, isoTimestamp, noContent, type RoutePlugin } from '../http/schemas.ts';
import type { SessionCookie } from '../http/session-cookie.ts';
import { accessTokenView, invitationView, userView } from './account.ts';
import { ROLES } from './actor.ts';
import type { AdminGate } from './admin-gate.ts';
import { ACCESS_TOKEN_DEFAULT_DAYS, ACCESS_TOKEN_MAX_DAYS, type Accounts } from './account.service.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './password.ts';
import type { PasswordWork } from './password-work.ts';
import type { SessionService } from './session.service.ts';
import type { SignInService } from './sign-in.service.ts';

export interface AccountRouteDeps {
  accounts: Accounts;
  gate: AdminGate;
  cookie: SessionCookie;
  /** Opens a session for a user who just accepted an invitation; ends the others after a password change. */
  sessions: Pick<SessionService, 'open' | 'closeOthers'>;
  publicUrl: string;
  /** Confirms a member's password under the per-account throttle of sign-in. */
  signIns: Pick<SignInService, 'confirmPassword' | 'passwordAllowed'>;
  /** Bounds the scrypt work of this process, per client and overall. */
  passwordWork: PasswordWork;
}

const role = { type: 'string', enum: ROLES } as const;
const email = { type: 'string', minLength: 3, maxLength: 320, pattern: '^[^\\s@]+@[^\\s@]+$' } as const;
const password = { type: 'string', minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH } as const;
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 100 } } } as const;

const userSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'email', 'role', 'createdAt'],
  properties: { id: { type: 'string' }, email: { type: 'string' }, role, createdAt: isoTimestamp },
} as const;
const invitationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'email', 'role', 'createdAt', 'expiresAt'],
  properties: {
    id: { type: 'string' },
    email: { type: 'string' },
    role,
    createdAt: isoTimestamp,
    expiresAt: isoTimestamp,
    token: { type: 'string', description: 'Shown once, on creation' },
    url: { type: 'string', description: 'The link to send, shown once, on creation' },
  },
} as const;
const accessTokenSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'tokenPrefix', 'createdAt', 'lastUsedAt', 'expiresAt'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    tokenPrefix: { type: 'string' },
    createdAt: isoTimestamp,
    lastUsedAt: { type: ['string', 'null'] },
    expiresAt: { type: ['string', 'null'], description: 'When the token stops working (null: a token that never works)' },
    token: { type: 'string', description: 'Shown once, on creation' },
  },
} as const;
const settingsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['viewersSeeSubmissions'],
  properties: { viewersSeeSubmissions: { type: 'boolean', description: 'Whether viewers may read form submissions' } },
} as const;

/** Members, invitations, personal access tokens and the members settings (issue 13). */
export const accountRoutes: RoutePlugin<AccountRouteDeps> = async (app, deps) => {
  const { accounts, gate, cookie } = deps;

  app.post(
    '/users',
    {
      config: { access: 'admin_token' },
      schema: {
        summary: 'Create a user directly (the admin token only: the first owner); later members are invited',
        body: { type: 'object', additionalProperties: false, required: ['email', 'password'], properties: { email, password, role } },
        response: { 201: userSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { email, password, role } = request.body;
      const user = await deps.passwordWork.run(clientKey(request.ip), () =>
        accounts.members.createUser({ email, password, role: role ?? 'owner' }, request.actor),
      );
      return reply.code(201).send(userView(user));
    },
  );

  app.get(
    '/users',
    {
      config: { access: 'owner' },
      schema: {
        summary: 'The members',
        response: {
          200: { type: 'object', additionalProperties: false, required: ['users'], properties: { users: { type: 'array', items: userSchema } } },
          ...adminErrors,
        },
      },
    },
    async () => ({ users: (await accounts.members.listUsers()).map(userView) }),
  );

  app.patch(
    '/users/:id',
    {
      config: { access: 'owner' },
      schema: {
        summary: "Change a member's role (the last owner stays an owner)",
        params: idParams,
        body: { type: 'object', additionalProperties: false, required: ['role'], properties: { role } },
        response: { 200: userSchema, ...adminErrors },
      },
    },
    async (request) => userView(await accounts.members.changeRole(request.params.id, request.body.role, request.actor)),
  );

  app.delete(
    '/users/:id',
    {
      config: { access: 'owner' },
      schema: { summary: 'Remove a member, with their sessions and access tokens', params: idParams, response: { 204: noContent, ...adminErrors } },
    },
    async (request, reply) => {
      await accounts.members.removeUser(request.params.id, request.actor);
      return reply.code(204).send();
    },
  );

  app.post(
    '/invitations',
    {
      config: { access: 'owner' },
      schema: {
        summary: 'Invite an address with a role: a single-use link that expires',
        body: { type: 'object', additionalProperties: false, required: ['email', 'role'], properties: { email, role } },
        response: { 201: invitationSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { invitation, token } = await accounts.invitations.invite(request.body, request.actor);
      const url = new URL(`/accept-invitation#token=${token}`, deps.publicUrl).toString();
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...invitationView(invitation), token, url });
    },
  );

  app.get(
    '/invitations',
    {
      config: { access: 'owner' },
      schema: {
        summary: 'Open invitations (neither accepted nor expired)',
        response: {
          200: {
            type: 'object',
            additionalProperties: false,
            required: ['invitations'],
            properties: { invitations: { type: 'array', items: invitationSchema } },
          },
          ...adminErrors,
        },
      },
    },
    async () => ({ invitations: (await accounts.invitations.listInvitations()).map(invitationView) }),
  );

  app.delete(
    '/invitations/:id',
    { config: { access: 'owner' }, schema: { summary: 'Revoke an open invitation', params: idParams, response: { 204: noContent, ...adminErrors } } },
    async (request, reply) => {
      await accounts.invitations.revokeInvitation(request.params.id, request.actor);
      return reply.code(204).send();
    },
  );

  app.post(
    '/invitations/accept',
    {
      // No credential: the invitation token is one. Each attempt counts towards the address's limit first.
      config: { signIn: true },
      schema: {
        summary: 'Accept an invitation: choose a password; answers a signed-in session',
        security: [],
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['token', 'password'],
          properties: { token: { type: 'string', minLength: 1, maxLength: 200 }, password },
        },
        response: {
          201: {
            type: 'object',
            additionalProperties: false,
            required: ['expiresAt', 'user'],
            properties: { expiresAt: isoTimestamp, user: userSchema },
          },
          ...adminErrors,
        },
      },
    },
    async (request, reply) => {
      // Under FLAGPOST_SSO_ONLY members join through the identity provider, not with a password.
      if (!deps.signIns.passwordAllowed(undefined)) throw new AppError('forbidden', messages.passwordsOff);
      // The attempt counts against the address before the password is hashed; a valid invitation gives it back.
      const user = await deps.passwordWork.run(clientKey(request.ip), async () => {
        const attempt = await gate.reserveAttempt(request);
        try {
          const accepted = await accounts.invitations.acceptInvitation(request.body.token, request.body.password);
          await attempt.refund();
          return accepted;
        } catch (error) {
          if (!(error instanceof AppError && error.message === messages.invitationInvalid)) await attempt.refund();
          throw error;
        }
      });
      const { session, token } = await deps.sessions.open({ userId: user.id });
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .setCookie(cookie.name, token, cookie.options)
        .send({ expiresAt: session.expiresAt, user: userView(user) });
    },
  );

  app.post(
    '/me/password',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Change your password; your other sessions and your access tokens end',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['currentPassword', 'newPassword'],
          properties: { currentPassword: { type: 'string', minLength: 1, maxLength: PASSWORD_MAX_LENGTH }, newPassword: password },
        },
        response: { 204: noContent, ...adminErrors },
      },
    },
    async (request, reply) => {
      const member = request.member!;
      // A wrong current password counts like a wrong sign-in, before the scrypt work: a stolen session cannot guess it freely.
      await deps.passwordWork.run(clientKey(request.ip), async () => {
        await deps.signIns.confirmPassword(member, request.body.currentPassword, 'body.currentPassword');
        await accounts.members.changePassword(member.id, request.body.newPassword, request.actor);
      });
      await deps.sessions.closeOthers(member.id, request.cookies[cookie.name]);
      return reply.code(204).send();
    },
  );

  app.get(
    '/me/tokens',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Your personal access tokens',
        response: {
          200: { type: 'object', additionalProperties: false, required: ['tokens'], properties: { tokens: { type: 'array', items: accessTokenSchema } } },
          ...adminErrors,
        },
      },
    },
    async (request) => ({ tokens: (await accounts.accessTokens.listAccessTokens(request.member!.id)).map(accessTokenView) }),
  );

  app.post(
    '/me/tokens',
    {
      config: { access: 'session' },
      schema: {
        summary: 'Create a personal access token with your current password: acts with your role; shown once; expires',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'password'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100 },
            password: { type: 'string', minLength: 1, maxLength: PASSWORD_MAX_LENGTH, description: 'Your current password' },
            expiresInDays: {
              type: 'integer',
              minimum: 1,
              maximum: ACCESS_TOKEN_MAX_DAYS,
              description: `Days until the token stops working (default ${ACCESS_TOKEN_DEFAULT_DAYS})`,
            },
          },
        },
        response: { 201: accessTokenSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const member = request.member!;
      await deps.passwordWork.run(clientKey(request.ip), () => deps.signIns.confirmPassword(member, request.body.password, 'body.password'));
      const user = await accounts.members.getUser(member.id);
      const days = request.body.expiresInDays ?? ACCESS_TOKEN_DEFAULT_DAYS;
      const { accessToken, token } = await accounts.accessTokens.createAccessToken(user, request.body.name.trim(), days, request.actor);
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...accessTokenView(accessToken), token });
    },
  );

  app.delete(
    '/me/tokens/:id',
    { config: { access: 'user' }, schema: { summary: 'Revoke one of your access tokens', params: idParams, response: { 204: noContent, ...adminErrors } } },
    async (request, reply) => {
      await accounts.accessTokens.revokeAccessToken(request.member!.id, request.params.id, request.actor);
      return reply.code(204).send();
    },
  );

  app.get('/settings', { schema: { summary: 'Instance settings of members', response: { 200: settingsSchema, ...adminErrors } } }, async () => ({
    viewersSeeSubmissions: await accounts.members.viewersSeeSubmissions(),
  }));

  app.patch(
    '/settings',
    {
      config: { access: 'owner' },
      schema: {
        summary: 'Change instance settings of members',
        body: { type: 'object', additionalProperties: false, properties: { viewersSeeSubmissions: { type: 'boolean' } } },
        response: { 200: settingsSchema, ...adminErrors },
      },
    },
    async (request) => {
      if (request.body.viewersSeeSubmissions !== undefined) await accounts.members.setViewersSeeSubmissions(request.body.viewersSeeSubmissions, request.actor);
      return { viewersSeeSubmissions: await accounts.members.viewersSeeSubmissions() };
    },
  );
};
