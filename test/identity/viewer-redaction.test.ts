import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect, type TestContext } from '../support/context.ts';
import { createProject } from '../support/fixtures.ts';

// Issue 20 items 6 and 8: what a viewer must not read. A generic webhook URL often carries a token, as
// Slack and Discord URLs always do: viewers see none of them, in forms, audit entries or delivery
// targets. Members' e-mail addresses (the member list is for owners) are not in the audit entries a
// viewer reads, and neither are access and erasure requests.

const PASSWORD = 'a long test password 0123';
// A loopback target: the default webhook policy refuses it, so nothing is sent anywhere.
const WEBHOOK = 'http://127.0.0.1:9/hooks/incoming?token=generic-webhook-secret';

forEachDialect(
  'what viewers do not read',
  (ctx) => {
    const cookies: Record<string, string> = {};
    let formKey = '';
    let submissionId = '';

    async function member(c: TestContext, role: 'owner' | 'editor' | 'viewer', address: string) {
      const created = await c.admin('POST', '/admin/v1/users', { email: address, password: PASSWORD, role });
      assert.equal(created.statusCode, 201, created.body);
      const signIn = await c.app.inject({ method: 'POST', url: '/admin/v1/sessions', payload: { email: address, password: PASSWORD } });
      assert.equal(signIn.statusCode, 201, signIn.body);
      cookies[role] = signIn.cookies.map((k) => `${k.name}=${k.value}`).join('; ');
    }
    const as = (role: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
      ctx().app.inject({ method, url, headers: { cookie: cookies[role]!, origin: ctx().config.publicUrl }, ...(payload ? { payload } : {}) });

    before(async () => {
      await member(ctx(), 'owner', 'olivia.owner@example.com');
      await member(ctx(), 'editor', 'eddie.editor@example.com');
      await member(ctx(), 'viewer', 'vera.viewer@example.com');
      await createProject(ctx(), 'Shop');
      const form = await as('editor', 'POST', '/admin/v1/forms', { name: 'Hooked', webhookUrl: WEBHOOK });
      assert.equal(form.statusCode, 201, form.body);
      formKey = form.json().key;
      assert.equal((await as('editor', 'PATCH', `/admin/v1/forms/${formKey}`, { webhookUrl: `${WEBHOOK}-2` })).statusCode, 200);
      const sent = await ctx().app.inject({ method: 'POST', url: `/v1/s/${formKey}?mode=rest`, payload: { email: 'someone@example.com' } });
      assert.equal(sent.statusCode, 200, sent.body);
      submissionId = sent.json().id;
      assert.equal((await as('owner', 'PATCH', '/admin/v1/settings', { viewersSeeSubmissions: true })).statusCode, 200);
      assert.equal((await as('editor', 'POST', '/admin/v1/personal-data/export', { email: 'someone@example.com' })).statusCode, 200);
    });

    it('hides the webhook URL of a form from viewers, and shows it to editors', async () => {
      const seen = await as('viewer', 'GET', `/admin/v1/forms/${formKey}`);
      assert.equal(seen.json().webhookUrl, '[redacted]');
      const listed = (await as('viewer', 'GET', '/admin/v1/forms')).json().forms.find((f: { key: string }) => f.key === formKey);
      assert.equal(listed.webhookUrl, '[redacted]');
      assert.equal((await as('editor', 'GET', `/admin/v1/forms/${formKey}`)).json().webhookUrl, `${WEBHOOK}-2`);
    });

    it("hides a webhook delivery's target from viewers", async () => {
      const seen = await as('viewer', 'GET', `/admin/v1/forms/${formKey}/submissions/${submissionId}`);
      assert.equal(seen.statusCode, 200, seen.body);
      assert.deepEqual(
        seen.json().deliveries.map((d: { kind: string; target: string }) => [d.kind, d.target]),
        [['webhook', '[redacted]']],
      );
      const editor = await as('editor', 'GET', `/admin/v1/forms/${formKey}/submissions/${submissionId}`);
      assert.equal(editor.json().deliveries[0].target, `${WEBHOOK}-2`);
    });

    it('hides webhook URLs in audit entries from viewers, and keeps them for editors', async () => {
      const entries = (await as('viewer', 'GET', `/admin/v1/audit?entity=form&entityId=${formKey}`)).json().entries as Array<{
        action: string;
        changes: Record<string, unknown>;
      }>;
      assert.deepEqual(
        entries.map((e) => [e.action, e.changes.webhookUrl]),
        [
          ['form.updated', { before: '[redacted]', after: '[redacted]' }],
          ['form.created', { after: '[redacted]' }],
        ],
      );
      const forEditor = (await as('editor', 'GET', `/admin/v1/audit?entity=form&entityId=${formKey}`)).json().entries;
      assert.deepEqual(forEditor[0].changes.webhookUrl, { before: WEBHOOK, after: `${WEBHOOK}-2` });
    });

    it("shows viewers no member's e-mail address in the audit log", async () => {
      const res = await as('viewer', 'GET', '/admin/v1/audit?limit=200');
      assert.equal(res.statusCode, 200);
      assert.doesNotMatch(res.body, /@example\.com/);
      const actors = (res.json().entries as Array<{ actor: { type: string; id: string | null; label: string } }>).map((e) => e.actor);
      assert.ok(actors.some((a) => a.type === 'user' && a.id !== null && a.label === 'a member'));
      const forEditor = (await as('editor', 'GET', '/admin/v1/audit?limit=200')).json().entries as Array<{ actor: { label: string } }>;
      assert.ok(forEditor.some((e) => e.actor.label === 'eddie.editor@example.com'));
    });

    it('lists access and erasure requests to owners only', async () => {
      for (const role of ['viewer', 'editor']) {
        const entries = (await as(role, 'GET', '/admin/v1/audit?limit=200')).json().entries as Array<{ entity: string }>;
        assert.deepEqual(
          entries.filter((e) => e.entity === 'personal_data'),
          [],
        );
        assert.equal((await as(role, 'GET', '/admin/v1/audit?entity=personal_data')).statusCode, 403);
      }
      const forOwner = (await as('owner', 'GET', '/admin/v1/audit?entity=personal_data')).json().entries as Array<{ action: string; actor: { label: string } }>;
      assert.deepEqual(
        forOwner.map((e) => [e.action, e.actor.label]),
        [['personal_data.exported', 'eddie.editor@example.com']],
      );
    });
  },
  { FLAGPOST_WEBHOOK_TARGETS: 'private' },
);
