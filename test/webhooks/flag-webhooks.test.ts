import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { WEBHOOK_EVENTS } from '../../src/webhooks/webhook.ts';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, type ProjectFixture } from '../support/fixtures.ts';
import { startWebhookReceiver, verifyWebhook, waitFor } from '../support/forms.ts';
import { createMember, type Member } from '../support/members.ts';

// Issue 23, "Events on flag changes", done when: a local receiver gets signed flag-change events in
// order of commit, through a receiver outage, exactly the events it subscribed to. Real loopback
// receivers (style.md "Tests"); the clock runs (retries are due on it), shifted when a scheduled change
// must come due.

let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

const ok = (res: { statusCode: number; body: string }, status = 200) => {
  assert.equal(res.statusCode, status, res.body);
  return res.body === '' ? undefined : JSON.parse(res.body);
};

forEachDialect(
  'project webhooks on flag changes (issue 23)',
  (ctx) => {
    let project: ProjectFixture;
    let owner: Member;
    let editor: Member;
    let viewer: Member;
    const base = () => `/admin/v1/projects/${project.key}`;

    before(async () => {
      project = await createProject(ctx(), 'Webhooks');
      owner = await createMember(ctx(), 'owner@example.com', 'owner');
      editor = await createMember(ctx(), 'editor@example.com', 'editor');
      viewer = await createMember(ctx(), 'viewer@example.com', 'viewer');
    });

    it('delivers signed events in commit order through a receiver outage, each once, and only those subscribed to', async () => {
      // The outage: the first five requests are answered 500, then the receiver is back.
      const all = await startWebhookReceiver([500, 500, 500, 500, 500]);
      const deletions = await startWebhookReceiver();
      try {
        const hookAll = ok(await ctx().admin('POST', `${base()}/webhooks`, { url: all.url }), 201);
        assert.match(hookAll.secret, /^whsec_/);
        // Every event by default: the flag and change-request events (issue 23) and the releases' (issue 33).
        assert.deepEqual(hookAll.events, [...WEBHOOK_EVENTS]);
        const hookDeletions = ok(await ctx().admin('POST', `${base()}/webhooks`, { url: deletions.url, events: ['flag.deleted'] }), 201);
        const env = project.environments[0]!.key;

        await createFlag(ctx(), project.key, { slug: 'banner' });
        // A refused write is rolled back and sends nothing.
        assert.equal((await ctx().admin('POST', `${base()}/flags`, { slug: 'banner' })).statusCode, 409);
        ok(await ctx().admin('PATCH', `${base()}/environments/${env}/flags/banner`, { description: 'first' }));

        const cr = ok(
          await owner.call('POST', `${base()}/change-requests`, {
            environment: env,
            title: 'Describe',
            flags: [{ slug: 'banner', values: { description: 'second' } }],
            submit: true,
          }),
          201,
        );
        ok(await editor.call('POST', `${base()}/change-requests/${cr.id}/approve`, { revision: 1 }));
        ok(await owner.call('POST', `${base()}/change-requests/${cr.id}/apply`));

        const later = ok(
          await owner.call('POST', `${base()}/change-requests`, {
            environment: env,
            title: 'Later',
            flags: [{ slug: 'banner', values: { description: 'third' } }],
            submit: true,
          }),
          201,
        );
        ok(await editor.call('POST', `${base()}/change-requests/${later.id}/approve`, { revision: 1 }));
        ok(await owner.call('PUT', `${base()}/change-requests/${later.id}/schedule`, { at: new Date(clock().getTime() + 60_000).toISOString() }));
        offsetMs += 120_000;
        assert.equal(await ctx().services.changeApplier.runDue(), 1);

        ok(await ctx().admin('DELETE', `${base()}/flags/banner`), 204);

        const expected = [
          'flag.created',
          'flag.updated',
          'change_request.opened',
          'change_request.approved',
          'flag.updated',
          'change_request.applied',
          'change_request.opened',
          'change_request.approved',
          'flag.updated',
          'scheduled_change.applied',
          'flag.deleted',
        ];
        await waitFor(() => all.received.length === expected.length + 5, 20_000, 'every event after the outage');
        // Nothing more arrives: every event once, none twice.
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.equal(all.received.length, expected.length + 5);
        const accepted = all.received.slice(5);
        for (const hook of all.received) assert.ok(verifyWebhook(hookAll.secret, hook.headers, hook.body), 'signed with the secret shown at creation');
        // The retries of the outage were the first event's, and nothing was sent before it was delivered.
        assert.deepEqual(new Set(all.received.slice(0, 6).map((h) => h.headers['webhook-id'])).size, 1);
        const ids = accepted.map((h) => h.headers['webhook-id']);
        assert.equal(new Set(ids).size, ids.length);
        const bodies = accepted.map((h) => JSON.parse(h.body));
        assert.deepEqual(
          bodies.map((b) => b.type),
          expected,
        );

        const updated = bodies[1];
        assert.deepEqual(updated.data.project, { key: project.key });
        assert.deepEqual(updated.data.environment, { key: env });
        assert.equal(updated.data.entity, 'flag');
        assert.equal(updated.data.entityId, 'banner');
        assert.deepEqual(updated.data.changes.description, { before: '', after: 'first' });
        assert.equal(updated.data.actor.type, 'admin_token');
        assert.match(bodies[3].data.actor.label, /^editor@example\.com/);
        assert.equal(bodies[5].data.entityId, cr.id);
        assert.equal(bodies[9].data.entityId, later.id);

        await waitFor(() => deletions.received.length === 1, 5000, 'the deletion');
        assert.equal(JSON.parse(deletions.received[0]!.body).type, 'flag.deleted');
        assert.ok(verifyWebhook(hookDeletions.secret, deletions.received[0]!.headers, deletions.received[0]!.body));

        const history = ok(await ctx().admin('GET', `${base()}/webhooks/${hookAll.id}/deliveries`)).deliveries;
        assert.equal(history.length, expected.length);
        assert.deepEqual(
          history.map((d: { status: string }) => d.status),
          expected.map(() => 'delivered'),
        );
        // `limit` comes as query text, as every client sends it (docs/api.md's example, issue 31 item 10).
        const newest = ok(await ctx().admin('GET', `${base()}/webhooks/${hookAll.id}/deliveries?limit=2`)).deliveries;
        assert.deepEqual(
          newest.map((d: { id: string }) => d.id),
          history.slice(0, 2).map((d: { id: string }) => d.id),
        );
        const refused = await ctx().admin('GET', `${base()}/webhooks/${hookAll.id}/deliveries?limit=201`);
        assert.equal(refused.statusCode, 400);
        assert.deepEqual(refused.json().details, [{ field: 'querystring.limit', reason: 'must be a whole number from 1 to 200' }]);
        const first = history[history.length - 1];
        assert.equal(first.attempts, 6);
        assert.deepEqual(
          first.history.map((a: { statusCode: number }) => a.statusCode),
          [500, 500, 500, 500, 500, 200],
        );

        const again = ok(await editor.call('POST', `${base()}/webhooks/${hookAll.id}/deliveries/${first.id}/redeliver`), 202);
        assert.notEqual(again.id, first.id);
        await waitFor(() => all.received.length === expected.length + 6, 5000, 'the redelivery');
        const redelivered = all.received.at(-1)!;
        assert.equal(redelivered.headers['webhook-id'], again.id);
        assert.equal(redelivered.body, accepted[0]!.body);
        const entry = ok(await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&entity=webhook&entityId=${hookAll.id}`)).entries[0];
        assert.equal(entry.action, 'webhook.redelivered');
        assert.deepEqual(entry.changes.webhookUrl, { before: all.url, after: all.url }, 'the entry names the webhook by its URL');
      } finally {
        await all.close();
        await deletions.close();
      }
    });

    it('sends a preset the chat message of the event, unsigned', async () => {
      const chat = await startWebhookReceiver();
      try {
        ok(await ctx().admin('POST', `${base()}/webhooks`, { url: chat.url, preset: 'discord', events: ['flag.created'] }), 201);
        await createFlag(ctx(), project.key, { slug: 'chatty' });
        await waitFor(() => chat.received.length === 1, 5000, 'the chat message');
        const [message] = chat.received;
        assert.equal(message!.headers['webhook-signature'], undefined);
        const body = JSON.parse(message!.body);
        assert.deepEqual(body.allowed_mentions, { parse: [] });
        assert.equal(body.embeds[0].title, `Flag created: chatty in ${project.key} by admin token`);
      } finally {
        await chat.close();
      }
    });

    it('lets viewers read webhooks with their URLs redacted, editors manage them', async () => {
      const created = ok(await editor.call('POST', `${base()}/webhooks`, { url: 'https://hooks.slack.com/services/T/B/secret', preset: 'slack' }), 201);
      assert.equal(created.secret, null);
      assert.equal(created.preset, 'slack');
      assert.equal((await viewer.call('POST', `${base()}/webhooks`, { url: 'https://example.com/x' })).statusCode, 403);
      const listed = ok(await viewer.call('GET', `${base()}/webhooks`)).webhooks;
      assert.ok(listed.every((w: { url: string }) => w.url === '[redacted]'));
      assert.equal(ok(await editor.call('GET', `${base()}/webhooks/${created.id}`)).url, 'https://hooks.slack.com/services/T/B/secret');
      const patched = ok(await editor.call('PATCH', `${base()}/webhooks/${created.id}`, { events: ['flag.deleted', 'flag.created'] }));
      // The entry of a change of events names the webhook by its URL, unchanged (issue 31 item 12).
      const updated = ok(await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&entity=webhook&entityId=${created.id}`)).entries[0];
      assert.equal(updated.action, 'webhook.updated');
      assert.deepEqual(updated.changes.webhookUrl, {
        before: 'https://hooks.slack.com/services/T/B/secret',
        after: 'https://hooks.slack.com/services/T/B/secret',
      });
      assert.deepEqual(patched.events, ['flag.created', 'flag.deleted']);
      const bad = await editor.call('PATCH', `${base()}/webhooks/${created.id}`, { url: 'ftp://example.com' });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().message, 'A webhook URL is an http or https URL without a user name or password');
      assert.equal((await editor.call('DELETE', `${base()}/webhooks/${created.id}`)).statusCode, 204);
      const gone = await editor.call('GET', `${base()}/webhooks/${created.id}`);
      assert.equal(gone.statusCode, 404);
      assert.equal(gone.json().message, `Webhook ${created.id} does not exist in project ${project.key}`);
    });
  },
  { FLAGPOST_OUTBOX_POLL_MS: '20', FLAGPOST_OUTBOX_RETRY_BASE_MS: '10', FLAGPOST_WEBHOOK_TARGETS: 'private' },
  { clock },
);
