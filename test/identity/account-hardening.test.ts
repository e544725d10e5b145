import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { AppError } from '../../src/errors.ts';
import { forEachDialect } from '../support/context.ts';

// Issue 20, "Fix first" 8 (the account parts): an owner demoted while inviting leaves no invitation;
// personal access tokens expire, need the password to be made and end with a password change; sign-ins,
// failed sign-ins and admin-token resets are in the audit log, never with a password.

let now = Date.parse('2026-06-01T08:00:00.000Z');
const clock = () => new Date(now);
const PASSWORD = 'correct horse battery staple';
const cookieOf = (res: LightMyRequestResponse) => res.cookies.map((c) => `${c.name}=${c.value}`).join('; ');

forEachDialect(
  'accounts under issue 20',
  (ctx) => {
    const signIn = (email: string, password: string, remoteAddress = '203.0.113.1') =>
      ctx().app.inject({ method: 'POST', url: '/admin/v1/sessions', remoteAddress, payload: { email, password } });
    const as = (credential: { cookie?: string; token?: string }, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
      ctx().app.inject({
        method,
        url,
        headers: credential.cookie ? { cookie: credential.cookie, origin: ctx().config.publicUrl } : { authorization: `Bearer ${credential.token}` },
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const createUser = async (email: string, role = 'owner') => {
      const res = await ctx().admin('POST', '/admin/v1/users', { email, password: PASSWORD, role });
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: string; email: string };
    };
    const openInvitationsBy = async (userId: string) =>
      (await ctx().handle.db.selectFrom('invitations').select('id').where('invited_by', '=', userId).where('accepted_at', 'is', null).execute()).length;

    before(async () => {
      await createUser('ada@example.com');
    });

    describe('invitations of an owner being demoted', () => {
      it('refuses an invitation whose inviter is no longer an owner when it is written', async () => {
        const bo = await createUser('bo@example.com');
        assert.equal((await ctx().admin('PATCH', `/admin/v1/users/${bo.id}`, { role: 'editor' })).statusCode, 200);
        // The request was let in while bo was an owner; the demotion committed before the invitation.
        await assert.rejects(
          ctx().services.identity.accounts.invitations.invite({ email: 'late@example.com', role: 'owner' }, { type: 'user', id: bo.id, label: bo.email }),
          (error: unknown) => error instanceof AppError && error.status === 403,
        );
        assert.equal(await openInvitationsBy(bo.id), 0);
      });

      it('leaves no open invitation when an invitation and the demotion race', async () => {
        for (let round = 0; round < 6; round++) {
          const owner = await createUser(`racer${round}@example.com`);
          const cookie = cookieOf(await signIn(owner.email, PASSWORD, `198.51.100.${round}`));
          const [invited, demoted] = await Promise.all([
            as({ cookie }, 'POST', '/admin/v1/invitations', { email: `guest${round}@example.com`, role: 'owner' }),
            ctx().admin('PATCH', `/admin/v1/users/${owner.id}`, { role: 'viewer' }),
          ]);
          assert.equal(demoted.statusCode, 200);
          assert.ok([201, 403].includes(invited.statusCode), invited.body);
          assert.equal(await openInvitationsBy(owner.id), 0, `round ${round}: ${invited.statusCode}`);
        }
      });
    });

    describe('personal access tokens', () => {
      let cookie = '';
      before(async () => {
        cookie = cookieOf(await signIn('ada@example.com', PASSWORD));
      });
      const mint = (body: Record<string, unknown>) => as({ cookie }, 'POST', '/admin/v1/me/tokens', body);

      it('needs the current password to be made, counted like a sign-in', async () => {
        const missing = await mint({ name: 'ci' });
        assert.equal(missing.statusCode, 400);
        const wrong = await mint({ name: 'ci', password: 'not the password' });
        assert.equal(wrong.statusCode, 400);
        assert.deepEqual(wrong.json().details, [{ field: 'body.password', reason: 'is not your current password' }]);
        assert.equal((await as({ cookie }, 'GET', '/admin/v1/me/tokens')).json().tokens.length, 0);
      });

      it('expires after 90 days by default, or after the days chosen (a year at most), with the generic 401', async () => {
        const standard = await mint({ name: 'standard', password: PASSWORD });
        assert.equal(standard.statusCode, 201, standard.body);
        assert.equal(standard.json().expiresAt, new Date(now + 90 * 86_400_000).toISOString());
        const short = await mint({ name: 'short', password: PASSWORD, expiresInDays: 1 });
        assert.equal(short.json().expiresAt, new Date(now + 86_400_000).toISOString());
        assert.equal((await mint({ name: 'long', password: PASSWORD, expiresInDays: 366 })).statusCode, 400);
        assert.equal((await mint({ name: 'zero', password: PASSWORD, expiresInDays: 0 })).statusCode, 400);
        const listed = (await as({ cookie }, 'GET', '/admin/v1/me/tokens')).json().tokens as Array<{ name: string; expiresAt: string }>;
        assert.deepEqual(listed.map((t) => t.name).sort(), ['short', 'standard']);
        assert.equal((await as({ token: short.json().token }, 'GET', '/admin/v1/projects')).statusCode, 200);
        now += 86_400_000;
        const expired = await as({ token: short.json().token }, 'GET', '/admin/v1/projects');
        assert.equal(expired.statusCode, 401);
        assert.deepEqual(expired.json(), { error: true, message: 'Missing or invalid admin token' });
        assert.equal((await as({ token: standard.json().token }, 'GET', '/admin/v1/projects')).statusCode, 200);
        // Sessions last 12 hours: sign in again for the next tests.
        cookie = cookieOf(await signIn('ada@example.com', PASSWORD));
      });

      it('ends with a password change, with the other sessions', async () => {
        const token = (await mint({ name: 'deploys', password: PASSWORD })).json().token as string;
        const other = cookieOf(await signIn('ada@example.com', PASSWORD, '203.0.113.2'));
        const changed = await as({ cookie }, 'POST', '/admin/v1/me/password', { currentPassword: PASSWORD, newPassword: 'a brand new password' });
        assert.equal(changed.statusCode, 204, changed.body);
        assert.equal((await as({ token }, 'GET', '/admin/v1/projects')).statusCode, 401);
        assert.equal((await as({ cookie: other }, 'GET', '/admin/v1/projects')).statusCode, 401);
        assert.equal((await as({ cookie }, 'GET', '/admin/v1/me/tokens')).json().tokens.length, 0);
        assert.equal((await as({ cookie }, 'GET', '/admin/v1/projects')).statusCode, 200, 'this session stays');
        const entry = (await ctx().admin('GET', '/admin/v1/audit?entity=member&limit=5')).json().entries[0];
        assert.equal(entry.action, 'member.password_changed');
        assert.ok(entry.changes.accessTokensRevoked.after >= 1);
        await as({ cookie }, 'POST', '/admin/v1/me/password', { currentPassword: 'a brand new password', newPassword: PASSWORD });
      });
    });

    describe('the audit log of sign-ins', () => {
      const entries = async (query: string) =>
        (await ctx().admin('GET', `/admin/v1/audit?entity=sign_in&limit=200${query}`)).json().entries as Array<{
          action: string;
          entityId: string;
          actor: { type: string; id: string | null; label: string };
          changes: Record<string, { after?: unknown }>;
        }>;

      it('records sign-ins and failed sign-ins with the client key, never a password', async () => {
        const viewer = await createUser('vi@example.com', 'viewer');
        assert.equal((await signIn('vi@example.com', PASSWORD, '2001:db8:aa:bb::7')).statusCode, 201);
        assert.equal((await signIn('vi@example.com', 'a wrong password here', '2001:db8:aa:bb::8')).statusCode, 401);
        assert.equal((await signIn('Nobody@Example.com', 'another wrong password', '192.0.2.77')).statusCode, 401);
        const adminToken = await ctx().app.inject({
          method: 'POST',
          url: '/admin/v1/sessions',
          remoteAddress: '192.0.2.78',
          payload: { token: 'wrong-admin-token-guess' },
        });
        assert.equal(adminToken.statusCode, 401);
        const all = await entries('');
        const succeeded = all.find((e) => e.action === 'sign_in.succeeded' && e.entityId === viewer.id)!;
        assert.deepEqual(succeeded.actor, { type: 'user', id: viewer.id, label: 'vi@example.com' });
        assert.deepEqual(succeeded.changes, { method: { after: 'password' }, address: { after: '2001:db8:aa:bb::/64' } });
        const failed = all.filter((e) => e.action === 'sign_in.failed');
        assert.deepEqual(
          failed.slice(0, 3).map((e) => [e.entityId, e.actor.type, e.actor.label, e.changes.method!.after]),
          [
            ['admin_token', 'anonymous', '192.0.2.78', 'admin_token'],
            ['nobody@example.com', 'anonymous', '192.0.2.77', 'password'],
            ['vi@example.com', 'anonymous', '2001:db8:aa:bb::/64', 'password'],
          ],
        );
        const text = JSON.stringify(all);
        for (const secret of [PASSWORD, 'a wrong password here', 'another wrong password', 'wrong-admin-token-guess']) assert.ok(!text.includes(secret));
        // About people: owners only.
        const viewerCookie = cookieOf(await signIn('vi@example.com', PASSWORD, '192.0.2.79'));
        assert.equal((await as({ cookie: viewerCookie }, 'GET', '/admin/v1/audit?entity=sign_in')).statusCode, 403);
        const seen = (await as({ cookie: viewerCookie }, 'GET', '/admin/v1/audit?limit=200')).json().entries as Array<{ entity: string }>;
        assert.ok(seen.every((e) => e.entity !== 'sign_in'));
      });

      it('records a sign-in with the admin token', async () => {
        const res = await ctx().app.inject({
          method: 'POST',
          url: '/admin/v1/sessions',
          remoteAddress: '192.0.2.80',
          payload: { token: 'test-admin-token-0123456789' },
        });
        assert.equal(res.statusCode, 201);
        const entry = (await entries('&actorType=admin_token'))[0]!;
        assert.equal(entry.action, 'sign_in.succeeded');
        assert.deepEqual(entry.changes, { method: { after: 'admin_token' }, address: { after: '192.0.2.80' } });
      });

      it('records no failure refused by the limits', async () => {
        const before = (await entries('')).length;
        for (let i = 0; i < 8; i++) await signIn('target@example.com', `guess ${i}`, `198.51.100.${60 + i}`);
        const failed = (await entries('')).filter((e) => e.action === 'sign_in.failed' && e.entityId === 'target@example.com');
        assert.equal(failed.length, 5, 'five evaluated, three refused with 429');
        assert.equal((await entries('')).length, before + 5);
      });
    });
  },
  {},
  { clock },
);
