import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { forEachDialect } from '../support/context.ts';
import { createProject, type ProjectFixture } from '../support/fixtures.ts';

// Members (issue 13, ADR 0021): the first owner made with the admin token, invitations, passwords,
// sessions per user, personal access tokens, sign-in throttling without user enumeration, and the audit
// log's actor for each. Time comes from the clock port (invitation expiry).

let now = Date.parse('2026-05-01T08:00:00.000Z');
const clock = () => new Date(now);
const PASSWORD = 'correct horse battery staple';

const cookieOf = (res: LightMyRequestResponse) => res.cookies.map((c) => `${c.name}=${c.value}`).join('; ');

forEachDialect(
  'members and access tokens',
  (ctx) => {
    let project: ProjectFixture;
    let ownerCookie = '';
    let ownerToken = '';
    const origin = () => ctx().config.publicUrl;
    const signIn = (email: string, password: string, remoteAddress = '203.0.113.1') =>
      ctx().app.inject({ method: 'POST', url: '/admin/v1/sessions', remoteAddress, payload: { email, password } });
    const as = (credential: { cookie?: string; token?: string }, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
      ctx().app.inject({
        method,
        url,
        headers: credential.cookie ? { cookie: credential.cookie, origin: origin() } : { authorization: `Bearer ${credential.token}` },
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const audit = async (query = '') => (await ctx().admin('GET', `/admin/v1/audit?limit=200${query}`)).json().entries as Array<Record<string, unknown>>;

    before(async () => {
      project = await createProject(ctx(), 'Team');
    });

    describe('the first owner', () => {
      const signInPage = async () => {
        const res = await ctx().app.inject({ method: 'GET', url: '/admin/v1/sso' });
        assert.equal(res.statusCode, 200, res.body);
        return res.json() as Record<string, unknown>;
      };

      it('tells the sign-in page, without a credential, that no owner exists yet, and nothing more (issue 31 item 17)', async () => {
        assert.deepEqual(await signInPage(), { enabled: false, name: null, passwordsOff: false, ownerExists: false });
      });

      it('must be an owner, made with the admin token; an address has one account', async () => {
        const editorFirst = await ctx().admin('POST', '/admin/v1/users', { email: 'ed@example.com', password: PASSWORD, role: 'editor' });
        assert.equal(editorFirst.statusCode, 400);
        const short = await ctx().admin('POST', '/admin/v1/users', { email: 'ada@example.com', password: 'short' });
        assert.equal(short.statusCode, 400);
        const created = await ctx().admin('POST', '/admin/v1/users', { email: 'Ada@Example.com', password: PASSWORD });
        assert.equal(created.statusCode, 201, created.body);
        assert.deepEqual({ email: created.json().email, role: created.json().role }, { email: 'ada@example.com', role: 'owner' });
        const again = await ctx().admin('POST', '/admin/v1/users', { email: 'ADA@example.com', password: PASSWORD });
        assert.equal(again.statusCode, 409);
        assert.deepEqual(await signInPage(), { enabled: false, name: null, passwordsOff: false, ownerExists: true });
      });

      it('signs in with e-mail and password; the session knows the user and role', async () => {
        const res = await signIn('ada@example.com', PASSWORD);
        assert.equal(res.statusCode, 201, res.body);
        ownerCookie = cookieOf(res);
        const current = await as({ cookie: ownerCookie }, 'GET', '/admin/v1/sessions/current');
        assert.equal(current.json().role, 'owner');
        assert.equal(current.json().user.email, 'ada@example.com');
        const token = await as({ cookie: ownerCookie }, 'POST', '/admin/v1/me/tokens', { name: 'deploys', password: PASSWORD });
        assert.equal(token.statusCode, 201);
        ownerToken = token.json().token;
        assert.match(ownerToken, /^fpt_/);
        const listed = await as({ token: ownerToken }, 'GET', '/admin/v1/me/tokens');
        assert.equal(listed.json().tokens.length, 1);
        assert.ok(!JSON.stringify(listed.json()).includes(ownerToken), 'the token is shown once');
      });
    });

    describe('sign-in throttling without user enumeration', () => {
      it('answers a wrong password and an unknown address alike', async () => {
        const wrong = await signIn('ada@example.com', 'not the password at all', '203.0.113.2');
        const unknown = await signIn('nobody@example.com', 'not the password at all', '203.0.113.2');
        assert.equal(wrong.statusCode, 401);
        assert.equal(unknown.statusCode, 401);
        assert.deepEqual(wrong.json(), unknown.json());
        assert.deepEqual(wrong.json(), { error: true, message: 'Invalid e-mail or password' });
      });

      it('refuses an address after five wrong passwords, from any client address, known or not', async () => {
        // ada@ has one wrong password from the test above; ghost@ has none and no account.
        for (const [email, more] of [
          ['ada@example.com', 4],
          ['ghost@example.com', 5],
        ] as const) {
          for (let i = 0; i < more; i++) assert.equal((await signIn(email, 'wrong password here', `198.51.100.${i}`)).statusCode, 401);
          const locked = await signIn(email, PASSWORD, '198.51.100.77');
          assert.equal(locked.statusCode, 429, email);
          assert.ok(Number(locked.headers['retry-after']) > 0);
        }
        now += 16 * 60_000;
        assert.equal((await signIn('ada@example.com', PASSWORD, '198.51.100.78')).statusCode, 201, 'the window passed');
      });
    });

    describe('invitations', () => {
      let editor = { id: '', cookie: '' };
      let viewerToken = '';

      it('invites an editor by a single-use link that a second use refuses', async () => {
        const res = await as({ token: ownerToken }, 'POST', '/admin/v1/invitations', { email: 'grace@example.com', role: 'editor' });
        assert.equal(res.statusCode, 201, res.body);
        const { token, url } = res.json();
        assert.equal(url, `${origin()}/accept-invitation#token=${token}`);
        assert.equal((await as({ token: ownerToken }, 'GET', '/admin/v1/invitations')).json().invitations.length, 1);
        const accepted = await ctx().app.inject({ method: 'POST', url: '/admin/v1/invitations/accept', payload: { token, password: PASSWORD } });
        assert.equal(accepted.statusCode, 201, accepted.body);
        editor = { id: accepted.json().user.id, cookie: cookieOf(accepted) };
        assert.equal(accepted.json().user.role, 'editor');
        assert.equal((await as({ cookie: editor.cookie }, 'GET', '/admin/v1/sessions/current')).json().role, 'editor');
        const twice = await ctx().app.inject({ method: 'POST', url: '/admin/v1/invitations/accept', payload: { token, password: PASSWORD } });
        assert.equal(twice.statusCode, 400);
        assert.equal(twice.json().message, 'This invitation is invalid, used or expired');
        assert.equal((await as({ token: ownerToken }, 'GET', '/admin/v1/invitations')).json().invitations.length, 0);
      });

      it('refuses an expired or revoked invitation with the same answer as an unknown one', async () => {
        const expiring = (await as({ token: ownerToken }, 'POST', '/admin/v1/invitations', { email: 'late@example.com', role: 'viewer' })).json();
        const revoked = (await as({ token: ownerToken }, 'POST', '/admin/v1/invitations', { email: 'nope@example.com', role: 'viewer' })).json();
        assert.equal((await as({ token: ownerToken }, 'DELETE', `/admin/v1/invitations/${revoked.id}`)).statusCode, 204);
        now += 8 * 86_400_000;
        const answers = [];
        for (const token of [expiring.token, revoked.token, 'fpi_unknown']) {
          answers.push((await ctx().app.inject({ method: 'POST', url: '/admin/v1/invitations/accept', payload: { token, password: PASSWORD } })).json());
        }
        assert.deepEqual(answers[0], answers[1]);
        assert.deepEqual(answers[1], answers[2]);
        assert.equal((await as({ token: ownerToken }, 'POST', '/admin/v1/invitations', { email: 'grace@example.com', role: 'viewer' })).statusCode, 409);
      });

      it('gives a viewer read access without secrets and no writes', async () => {
        const { token } = (await as({ token: ownerToken }, 'POST', '/admin/v1/invitations', { email: 'vic@example.com', role: 'viewer' })).json();
        const accepted = await ctx().app.inject({ method: 'POST', url: '/admin/v1/invitations/accept', payload: { token, password: PASSWORD } });
        viewerToken = (await as({ cookie: cookieOf(accepted) }, 'POST', '/admin/v1/me/tokens', { name: 'reader', password: PASSWORD })).json().token;
        assert.equal((await as({ token: ownerToken }, 'POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'beta' })).statusCode, 201);
        assert.equal((await as({ token: viewerToken }, 'GET', `/admin/v1/projects/${project.key}/flags`)).statusCode, 200);
        const toggle = await as({ token: viewerToken }, 'PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/beta`, {
          enabled: true,
        });
        assert.equal(toggle.statusCode, 403);
        assert.equal(toggle.json().message, 'Your role does not allow this');
        const form = await as({ token: ownerToken }, 'POST', '/admin/v1/forms', {
          name: 'Chat',
          slackWebhookUrl: 'https://hooks.slack.com/services/T0/B0/viewer-must-not-see',
        });
        const seen = await as({ token: viewerToken }, 'GET', `/admin/v1/forms/${form.json().key}`);
        assert.equal(seen.json().slackWebhookUrl, '[redacted]');
        assert.equal((await as({ token: ownerToken }, 'GET', `/admin/v1/forms/${form.json().key}`)).json().slackWebhookUrl, form.json().slackWebhookUrl);
        assert.equal((await as({ token: viewerToken }, 'GET', `/admin/v1/forms/${form.json().key}/submissions`)).statusCode, 403);
      });

      it('applies a role change at once, to sessions and tokens, and keeps the last owner', async () => {
        const users = (await as({ token: ownerToken }, 'GET', '/admin/v1/users')).json().users as Array<{ id: string; email: string }>;
        const vic = users.find((u) => u.email === 'vic@example.com')!;
        assert.equal((await as({ token: ownerToken }, 'PATCH', `/admin/v1/users/${vic.id}`, { role: 'editor' })).statusCode, 200);
        const toggle = await as({ token: viewerToken }, 'PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/beta`, {
          enabled: true,
        });
        assert.equal(toggle.statusCode, 200);
        const ada = users.find((u) => u.email === 'ada@example.com')!;
        assert.equal((await as({ token: ownerToken }, 'PATCH', `/admin/v1/users/${ada.id}`, { role: 'viewer' })).statusCode, 409);
        assert.equal((await as({ token: ownerToken }, 'DELETE', `/admin/v1/users/${ada.id}`)).statusCode, 409);
        assert.equal((await as({ token: viewerToken }, 'GET', '/admin/v1/users')).statusCode, 403);
      });

      it('ends the sessions and tokens of a removed member', async () => {
        const users = (await as({ token: ownerToken }, 'GET', '/admin/v1/users')).json().users as Array<{ id: string; email: string }>;
        const vic = users.find((u) => u.email === 'vic@example.com')!;
        assert.equal((await as({ token: ownerToken }, 'DELETE', `/admin/v1/users/${vic.id}`)).statusCode, 204);
        assert.equal((await as({ token: viewerToken }, 'GET', `/admin/v1/projects`)).statusCode, 401);
        assert.equal((await signIn('vic@example.com', PASSWORD, '203.0.113.9')).statusCode, 401);
      });

      it('changes a password: the old one stops working, and other sessions end', async () => {
        // A week passed since the invitation (expiry test): sessions from then are over.
        editor = { ...editor, cookie: cookieOf(await signIn('grace@example.com', PASSWORD, '203.0.113.10')) };
        ownerCookie = cookieOf(await signIn('ada@example.com', PASSWORD, '203.0.113.10'));
        const other = cookieOf(await signIn('grace@example.com', PASSWORD, '203.0.113.10'));
        const wrong = await as({ cookie: editor.cookie }, 'POST', '/admin/v1/me/password', {
          currentPassword: 'not it at all',
          newPassword: 'a brand new password',
        });
        assert.equal(wrong.statusCode, 400);
        const ok = await as({ cookie: editor.cookie }, 'POST', '/admin/v1/me/password', { currentPassword: PASSWORD, newPassword: 'a brand new password' });
        assert.equal(ok.statusCode, 204, ok.body);
        assert.equal((await as({ cookie: editor.cookie }, 'GET', '/admin/v1/sessions/current')).statusCode, 200, 'this session stays');
        assert.equal((await as({ cookie: other }, 'GET', '/admin/v1/sessions/current')).statusCode, 401, 'the other one ended');
        assert.equal((await signIn('grace@example.com', PASSWORD, '203.0.113.11')).statusCode, 401);
        assert.equal((await signIn('grace@example.com', 'a brand new password', '203.0.113.11')).statusCode, 201);
        assert.equal((await ctx().admin('POST', '/admin/v1/me/password', { currentPassword: 'x', newPassword: 'a brand new password' })).statusCode, 403);
      });

      it('revokes an access token', async () => {
        const id = (await as({ token: ownerToken }, 'GET', '/admin/v1/me/tokens')).json().tokens[0].id;
        assert.equal((await as({ cookie: editor.cookie }, 'DELETE', `/admin/v1/me/tokens/${id}`)).statusCode, 404, "not the editor's");
        assert.equal((await as({ token: ownerToken }, 'DELETE', `/admin/v1/me/tokens/${id}`)).statusCode, 204);
        assert.equal((await as({ token: ownerToken }, 'GET', '/admin/v1/projects')).statusCode, 401);
        ownerToken = (await as({ cookie: ownerCookie }, 'POST', '/admin/v1/me/tokens', { name: 'again', password: PASSWORD })).json().token;
      });
    });

    describe('the audit log', () => {
      it('names the member, or their token, as the actor of their writes', async () => {
        const byToken = (await audit('&entity=flag&entityId=beta')).find((e) => e.action === 'flag.created')!;
        assert.deepEqual(byToken.actor, { type: 'access_token', id: (byToken.actor as { id: string }).id, label: 'ada@example.com (token deploys)' });
        const joined = (await audit('&entity=member')).filter((e) => e.action === 'member.joined');
        assert.deepEqual(joined.map((e) => (e.actor as { label: string }).label).sort(), ['grace@example.com', 'vic@example.com']);
        const actions = new Set((await audit()).map((e) => e.action));
        for (const action of [
          'member.created',
          'member.joined',
          'member.role_changed',
          'member.removed',
          'member.password_changed',
          'invitation.created',
          'invitation.revoked',
          'access_token.created',
          'access_token.revoked',
        ]) {
          assert.ok(actions.has(action), action);
        }
        const byUser = await audit(`&actor=${(byToken.actor as { id: string }).id}`);
        assert.ok(byUser.length > 0 && byUser.every((e) => (e.actor as { id: string }).id === (byToken.actor as { id: string }).id));
      });

      it('names the member, invitation, access token or API key an entry is about, not only its id (issue 31 item 12)', async () => {
        const someone = ((await ctx().admin('GET', '/admin/v1/users')).json().users as Array<{ id: string; email: string; role: string }>).find(
          (u) => u.role !== 'owner',
        )!;
        assert.equal((await ctx().admin('PUT', `/admin/v1/users/${someone.id}/project-roles/${project.key}`, { role: 'editor' })).statusCode, 200);
        assert.equal((await ctx().admin('DELETE', `/admin/v1/users/${someone.id}/project-roles/${project.key}`)).statusCode, 204);
        const key = (await ctx().admin('POST', `/admin/v1/projects/${project.key}/api-keys`, { name: 'storefront' })).json() as { id: string };
        assert.equal((await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/api-keys/${key.id}`)).statusCode, 204);

        const named = (entry: Record<string, unknown>, field: string) => {
          const change = (entry.changes as Record<string, { before?: unknown; after?: unknown }>)[field];
          return typeof (change?.after ?? change?.before) === 'string' ? (change!.after ?? change!.before) : undefined;
        };
        const entries = [
          ...(await audit('&entity=member')),
          ...(await audit('&entity=invitation')),
          ...(await audit('&entity=access_token')),
          ...(await audit('&entity=api_key')),
        ];
        const field = { member: 'email', invitation: 'email', access_token: 'name', api_key: 'name' } as Record<string, string>;
        const unnamed = entries.filter((e) => named(e, field[e.entity as string]!) === undefined).map((e) => e.action);
        assert.deepEqual(unnamed, [], 'entries that name their subject by id only');
        for (const action of ['member.role_changed', 'member.password_changed', 'member.project_role_set', 'member.project_role_removed', 'api_key.revoked']) {
          assert.ok(
            entries.some((e) => e.action === action),
            action,
          );
        }
        const roleSet = entries.find((e) => e.action === 'member.project_role_set' && e.entityId === someone.id)!;
        assert.deepEqual(
          (roleSet.changes as Record<string, unknown>).email,
          { before: someone.email, after: someone.email },
          'unchanged: the same before and after',
        );
        assert.deepEqual(entries.find((e) => e.action === 'api_key.revoked')!.changes, { name: { before: 'storefront' } });
      });

      it('records no password, hash or token', async () => {
        const text = JSON.stringify(await audit());
        for (const secret of [PASSWORD, 'a brand new password', 'scrypt$', ownerToken, 'fpi_']) assert.ok(!text.includes(secret), secret.slice(0, 8));
      });
    });

    describe('what members cannot see or do', () => {
      let viewer = '';
      before(async () => {
        const { token } = (await ctx().admin('POST', '/admin/v1/invitations', { email: 'reader@example.com', role: 'viewer' })).json();
        const accepted = await ctx().app.inject({ method: 'POST', url: '/admin/v1/invitations/accept', payload: { token, password: PASSWORD } });
        assert.equal(accepted.statusCode, 201, accepted.body);
        const made = await as({ cookie: cookieOf(accepted) }, 'POST', '/admin/v1/me/tokens', { name: 'reader', password: PASSWORD });
        viewer = made.json().token;
        // An access token cannot mint another one (a leaked token must not outlive its revocation).
        const minted = await as({ token: viewer }, 'POST', '/admin/v1/me/tokens', { name: 'copy', password: PASSWORD });
        assert.equal(minted.statusCode, 403);
      });

      it("hides Slack and Discord targets of a submission's deliveries from viewers", async () => {
        // A loopback target on the discard port: nothing is ever delivered anywhere.
        const slack = 'http://127.0.0.1:9/services/T0/B0/slack-secret-part';
        const form = (await ctx().admin('POST', '/admin/v1/forms', { name: 'Chatty', slackWebhookUrl: slack })).json();
        const sent = await ctx().app.inject({ method: 'POST', url: `/v1/s/${form.key}?mode=rest`, payload: { message: 'hello' } });
        assert.equal(sent.statusCode, 200, sent.body);
        await ctx().admin('PATCH', '/admin/v1/settings', { viewersSeeSubmissions: true });
        const seen = await as({ token: viewer }, 'GET', `/admin/v1/forms/${form.key}/submissions/${sent.json().id}`);
        assert.equal(seen.statusCode, 200, seen.body);
        assert.ok(!seen.body.includes('slack-secret-part'), 'no Slack URL in the answer');
        assert.deepEqual(
          seen.json().deliveries.map((d: { kind: string; target: string }) => [d.kind, d.target]),
          [['slack', '[redacted]']],
        );
        const editor = (await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${sent.json().id}`)).json();
        assert.equal(editor.deliveries[0].target, slack);
        await ctx().admin('PATCH', '/admin/v1/settings', { viewersSeeSubmissions: false });
      });

      it('keeps entries about people out of the audit log for non-owners', async () => {
        const entries = (await as({ token: viewer }, 'GET', '/admin/v1/audit?limit=200')).json().entries as Array<{ entity: string }>;
        assert.ok(entries.length > 0);
        assert.deepEqual(
          entries.filter((e) => ['member', 'invitation', 'access_token', 'settings'].includes(e.entity)),
          [],
        );
        assert.equal((await as({ token: viewer }, 'GET', '/admin/v1/audit?entity=member')).statusCode, 403);
      });

      it("does not reset the address's failures with a member's own credential", async () => {
        const from = '198.51.100.200';
        const guess = (authorization: string) =>
          ctx().app.inject({ method: 'GET', url: '/admin/v1/projects', remoteAddress: from, headers: { authorization } });
        for (let round = 0; round < 2; round++) {
          for (let i = 0; i < 9; i++) assert.equal((await guess('Bearer wrong-token-guess')).statusCode, 401);
          assert.equal((await guess(`Bearer ${viewer}`)).statusCode, 200);
        }
        for (let i = 0; i < 2; i++) assert.equal((await guess('Bearer wrong-token-guess')).statusCode, 401);
        // 20 failures within the window, the member's requests between them notwithstanding: wrong
        // credentials are refused from now on, while the member's valid one still gets in (issue 20).
        assert.equal((await guess('Bearer wrong-token-guess')).statusCode, 429);
        assert.equal((await guess(`Bearer ${viewer}`)).statusCode, 200);
        assert.equal((await guess('Bearer wrong-token-guess')).statusCode, 429);
      });

      it('throttles wrong current passwords of a password change', async () => {
        const signedIn = cookieOf(await signIn('reader@example.com', PASSWORD, '203.0.113.50'));
        for (let i = 0; i < 5; i++) {
          const wrong = await as({ cookie: signedIn }, 'POST', '/admin/v1/me/password', {
            currentPassword: `guess number ${i}`,
            newPassword: 'whatever password 1',
          });
          assert.equal(wrong.statusCode, 400);
        }
        const locked = await as({ cookie: signedIn }, 'POST', '/admin/v1/me/password', { currentPassword: PASSWORD, newPassword: 'whatever password 1' });
        assert.equal(locked.statusCode, 429);
      });

      it('withdraws the open invitations of an owner who is demoted or removed', async () => {
        const other = await ctx().admin('POST', '/admin/v1/users', { email: 'temp-owner@example.com', password: PASSWORD, role: 'owner' });
        const cookie = cookieOf(await signIn('temp-owner@example.com', PASSWORD, '203.0.113.60'));
        const invited = await as({ cookie }, 'POST', '/admin/v1/invitations', { email: 'backdoor@example.com', role: 'owner' });
        assert.equal(invited.statusCode, 201, invited.body);
        assert.equal((await ctx().admin('DELETE', `/admin/v1/users/${other.json().id}`)).statusCode, 204);
        const accept = await ctx().app.inject({
          method: 'POST',
          url: '/admin/v1/invitations/accept',
          remoteAddress: '203.0.113.61',
          payload: { token: invited.json().token, password: PASSWORD },
        });
        assert.equal(accept.statusCode, 400);
      });

      it('records a replaced secret as a change, without its value', async () => {
        const form = (await ctx().admin('POST', '/admin/v1/forms', { name: 'Secretive', slackWebhookUrl: 'http://127.0.0.1:9/first-secret' })).json();
        await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { slackWebhookUrl: 'http://127.0.0.1:9/second-secret' });
        const entry = (await audit(`&entity=form&entityId=${form.key}`))[0]!;
        assert.equal(entry.action, 'form.updated');
        assert.deepEqual(entry.changes, { slackWebhookUrl: { before: '[redacted]', after: '[redacted]' } });
        assert.ok(!JSON.stringify(entry).includes('secret'));
      });
    });

    describe('the last owner, under concurrent requests', () => {
      it('keeps one owner when two owners are demoted at the same moment', async () => {
        const second = await ctx().admin('POST', '/admin/v1/users', { email: 'second-owner@example.com', password: PASSWORD, role: 'owner' });
        assert.equal(second.statusCode, 201, second.body);
        const users = (await ctx().admin('GET', '/admin/v1/users')).json().users as Array<{ id: string; role: string }>;
        const owners = users.filter((u) => u.role === 'owner');
        assert.equal(owners.length, 2);
        const answers = await Promise.all(owners.map((o) => ctx().admin('PATCH', `/admin/v1/users/${o.id}`, { role: 'viewer' })));
        assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 409]);
        const after = (await ctx().admin('GET', '/admin/v1/users')).json().users as Array<{ role: string }>;
        assert.equal(after.filter((u) => u.role === 'owner').length, 1);
      });
    });
  },
  // Forms below name loopback chat targets; the delivery policy must let such a URL be set (deliveries
  // to 127.0.0.1:9 are refused at once: nothing leaves the machine).
  { FLAGPOST_WEBHOOK_TARGETS: 'private' },
  { clock },
);
