import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { openDb } from '../../src/db/connect.ts';
import type { Lookup } from '../../src/delivery/index.ts';
import { ADMIN_TOKEN, forEachDialect } from '../support/context.ts';
import { createForm, startSmtpServer, startWebhookReceiver, submitJson, submitMultipart, verifyWebhook, waitFor } from '../support/forms.ts';

// Real loopback servers for what leaves the process (style.md "Tests"); started before the app so
// that SMTP_URL can point at them.
const smtp = await startSmtpServer();
after(() => smtp.close());

const deliveriesOf = async (ctx: () => import('../support/context.ts').TestContext, formKey: string, id: string) =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the deliveries' fields freely; the response schema check covers their shape
  (await ctx().admin('GET', `/admin/v1/forms/${formKey}/submissions/${id}`)).json().deliveries as Array<Record<string, any>>;

forEachDialect(
  'delivery: webhooks and e-mail from the outbox (contract D17, D18)',
  (ctx) => {
    it('posts the signed webhook body {formId, name, data, submissionId, files, createdAt}', async () => {
      const receiver = await startWebhookReceiver();
      try {
        const form = await createForm(ctx(), { name: 'Contact', webhookUrl: receiver.url, uploadsEnabled: true });
        const res = await submitMultipart(ctx(), form.key, [
          { name: 'email', value: 'ada@example.com' },
          { name: 'cv', filename: 'cv.pdf', contentType: 'application/pdf', content: '%PDF-1.7' },
        ]);
        const id = res.json().id;
        const [hook] = await waitFor(() => receiver.received.length === 1 && receiver.received, 5000, 'webhook');
        const body = JSON.parse(hook!.body);
        assert.deepEqual(Object.keys(body), ['formId', 'name', 'data', 'submissionId', 'files', 'createdAt']);
        assert.equal(body.formId, form.key);
        assert.equal(body.name, 'Contact');
        assert.deepEqual(body.data, { email: 'ada@example.com' });
        assert.equal(body.submissionId, id);
        assert.deepEqual(
          body.files.map((f: Record<string, unknown>) => [f.field, f.name, f.size, f.contentType]),
          [['cv', 'cv.pdf', 8, 'application/pdf']],
        );
        assert.equal(hook!.headers['content-type'], 'application/json');
        assert.ok(verifyWebhook(form.webhookSecret!, hook!.headers, hook!.body), 'signature verifies with the secret shown at creation');
        assert.ok(!verifyWebhook(`whsec_${Buffer.alloc(32).toString('base64')}`, hook!.headers, hook!.body));
        assert.ok(Math.abs(Number(hook!.headers['webhook-timestamp']) - Date.now() / 1000) < 30);
        const [delivery] = await waitFor(async () => {
          const d = await deliveriesOf(ctx, form.key, id);
          return d[0]?.status === 'delivered' && d;
        });
        assert.equal(delivery!.id, hook!.headers['webhook-id']);
        assert.equal(delivery!.attempts, 1);
      } finally {
        await receiver.close();
      }
    });

    it('retries a failing webhook with exponential backoff and records every attempt', async () => {
      const receiver = await startWebhookReceiver([500, 503]);
      try {
        const form = await createForm(ctx(), { webhookUrl: receiver.url });
        const id = (await submitJson(ctx(), form.key, { a: 1 })).json().id;
        await waitFor(() => receiver.received.length === 3, 5000, 'three webhook attempts');
        const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
        assert.equal(ids.size, 1, 'the same webhook-id on every retry');
        for (const r of receiver.received) assert.ok(verifyWebhook(form.webhookSecret!, r.headers, r.body));
        const [delivery] = await waitFor(async () => {
          const d = await deliveriesOf(ctx, form.key, id);
          return d[0]?.status === 'delivered' && d;
        });
        assert.deepEqual(
          delivery!.history.map((h: Record<string, unknown>) => [h.attempt, h.ok, h.statusCode, h.error]),
          [
            [1, false, 500, 'HTTP 500'],
            [2, false, 503, 'HTTP 503'],
            [3, true, 200, null],
          ],
        );
      } finally {
        await receiver.close();
      }
    });

    it('gives up after the configured number of attempts and marks the delivery failed', async () => {
      const receiver = await startWebhookReceiver([500, 500, 500, 500, 500]);
      try {
        const form = await createForm(ctx(), { webhookUrl: receiver.url });
        const id = (await submitJson(ctx(), form.key, { a: 1 })).json().id;
        const [delivery] = await waitFor(async () => {
          const d = await deliveriesOf(ctx, form.key, id);
          return d[0]?.status === 'failed' && d;
        });
        assert.equal(delivery!.attempts, 4);
        assert.equal(delivery!.history.length, 4);
        assert.equal(delivery!.lastError, 'HTTP 500');
        assert.equal(receiver.received.length, 4);
      } finally {
        await receiver.close();
      }
    });

    it('sends one notification e-mail per address over SMTP', async () => {
      const form = await createForm(ctx(), { name: 'Support', notifyEmails: ['ops@example.com', 'sales@example.com'] });
      const before = smtp.messages.length;
      const id = (await submitJson(ctx(), form.key, { email: 'ada@example.com', message: 'Hello there' })).json().id;
      await waitFor(() => smtp.messages.length === before + 2, 5000, 'two e-mails');
      const mails = smtp.messages.slice(before);
      assert.deepEqual(mails.map((m) => m.to[0]).sort(), ['ops@example.com', 'sales@example.com']);
      for (const mail of mails) {
        assert.equal(mail.from, 'forms@flagpost.test');
        assert.match(mail.raw, /Subject: New submission: Support/);
        assert.match(mail.raw, /email +ada@example\.com/);
        assert.match(mail.raw, /message +Hello there/);
        assert.ok(mail.raw.includes(id));
      }
    });

    it('never delivers spam', async () => {
      const receiver = await startWebhookReceiver();
      try {
        const form = await createForm(ctx(), { webhookUrl: receiver.url, notifyEmails: ['ops@example.com'] });
        const before = smtp.messages.length;
        const res = await submitJson(ctx(), form.key, { email: 'bot@example.com', _trap: 'filled' });
        assert.equal(res.statusCode, 200);
        await ctx().services.outbox.runOnce();
        assert.deepEqual(await deliveriesOf(ctx, form.key, res.json().id), []);
        assert.equal(receiver.received.length, 0);
        assert.equal(smtp.messages.length, before);
      } finally {
        await receiver.close();
      }
    });
  },
  {
    SMTP_URL: smtp.url,
    SMTP_FROM: 'forms@flagpost.test',
    FLAGPOST_OUTBOX_POLL_MS: '20',
    FLAGPOST_OUTBOX_RETRY_BASE_MS: '50',
    FLAGPOST_OUTBOX_MAX_ATTEMPTS: '4',
    // The receivers of these tests listen on loopback.
    FLAGPOST_WEBHOOK_TARGETS: 'private',
  },
);

forEachDialect(
  'delivery survives the process: the outbox is in the database (contract D18)',
  (ctx) => {
    let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
    before(async () => {
      receiver = await startWebhookReceiver();
    });
    after(() => receiver.close());

    it('keeps a queued delivery until a worker runs, then sends it once', async () => {
      const form = await createForm(ctx(), { webhookUrl: receiver.url });
      const id = (await submitJson(ctx(), form.key, { a: 1 })).json().id;
      const [queued] = await deliveriesOf(ctx, form.key, id);
      assert.equal(queued!.status, 'pending');
      assert.equal(receiver.received.length, 0);
      assert.equal(await ctx().services.outbox.runOnce(), 1);
      assert.equal(receiver.received.length, 1);
      assert.equal(await ctx().services.outbox.runOnce(), 0);
      assert.equal(receiver.received.length, 1);
    });

    it('sends each item once when several instances deliver at the same time (FOR UPDATE SKIP LOCKED on PostgreSQL)', async (t) => {
      if (ctx().dialect !== 'postgres') return t.skip('several instances need PostgreSQL');
      const form = await createForm(ctx(), { webhookUrl: receiver.url });
      const before = receiver.received.length;
      for (let i = 0; i < 30; i++) assert.equal((await submitJson(ctx(), form.key, { i })).statusCode, 200);
      const config = loadConfig({
        FLAGPOST_ADMIN_TOKEN: ADMIN_TOKEN,
        LOG_LEVEL: 'silent',
        FLAGPOST_OUTBOX_POLL_MS: '0',
        FLAGPOST_WEBHOOK_TARGETS: 'private',
        ...ctx().database.env,
      });
      const handles = [
        openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 4 }),
        openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 4 }),
      ];
      const instances = await Promise.all(handles.map((h) => compose(config, h)));
      try {
        const counts = await Promise.all([...instances, ctx().services].map((s) => s.outbox.runOnce()));
        assert.equal(
          counts.reduce((a, b) => a + b, 0),
          30,
          `attempts per instance: ${counts.join(', ')}`,
        );
        const ids = receiver.received.slice(before).map((r) => r.headers['webhook-id']);
        assert.equal(ids.length, 30);
        assert.equal(new Set(ids).size, 30);
      } finally {
        for (const s of instances) await s.stop();
        for (const h of handles) await h.close();
      }
    });
  },
  { FLAGPOST_OUTBOX_POLL_MS: '0', FLAGPOST_WEBHOOK_TARGETS: 'private' },
);

/** A clock the test moves by hand (the clock port of compose). */
const manual = { now: new Date('2026-11-22T10:00:00.000Z') };
const at = (ms: number) => new Date(Date.parse('2026-11-22T10:00:00.000Z') + ms);

forEachDialect(
  'delivery retries follow the backoff of the clock (contract D18)',
  (ctx) => {
    it('waits retryBase before the second attempt and twice that before the third', async () => {
      const receiver = await startWebhookReceiver([500, 503]);
      try {
        manual.now = at(0);
        const form = await createForm(ctx(), { webhookUrl: receiver.url });
        const id = (await submitJson(ctx(), form.key, { a: 1 })).json().id;
        const { outbox } = ctx().services;
        /** Moves the clock to t0 + ms, runs the worker once and checks the attempts it made and the delivery after it. */
        const step = async (ms: number, attempts: number, expected: { status: string; attempts: number; nextAttemptAt: string | null; received: number }) => {
          manual.now = at(ms);
          assert.equal(await outbox.runOnce(), attempts, `attempts made at t0+${ms} ms`);
          const [delivery] = await deliveriesOf(ctx, form.key, id);
          assert.deepEqual(
            { status: delivery!.status, attempts: delivery!.attempts, nextAttemptAt: delivery!.nextAttemptAt, received: receiver.received.length },
            expected,
            `delivery after the run at t0+${ms} ms`,
          );
        };
        await step(0, 1, { status: 'pending', attempts: 1, nextAttemptAt: at(50).toISOString(), received: 1 });
        await step(49, 0, { status: 'pending', attempts: 1, nextAttemptAt: at(50).toISOString(), received: 1 });
        await step(50, 1, { status: 'pending', attempts: 2, nextAttemptAt: at(50 + 100).toISOString(), received: 2 });
        await step(50 + 99, 0, { status: 'pending', attempts: 2, nextAttemptAt: at(50 + 100).toISOString(), received: 2 });
        await step(50 + 100, 1, { status: 'delivered', attempts: 3, nextAttemptAt: null, received: 3 });
        await step(10_000, 0, { status: 'delivered', attempts: 3, nextAttemptAt: null, received: 3 });
        const [delivery] = await deliveriesOf(ctx, form.key, id);
        assert.equal(delivery!.deliveredAt, at(150).toISOString());
        assert.equal(delivery!.lastError, null);
        // The clock stands still during an attempt, so every duration is 0.
        assert.deepEqual(delivery!.history, [
          { attempt: 1, startedAt: at(0).toISOString(), durationMs: 0, ok: false, statusCode: 500, error: 'HTTP 500' },
          { attempt: 2, startedAt: at(50).toISOString(), durationMs: 0, ok: false, statusCode: 503, error: 'HTTP 503' },
          { attempt: 3, startedAt: at(150).toISOString(), durationMs: 0, ok: true, statusCode: 200, error: null },
        ]);
        assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 1, 'the same webhook-id on every attempt');
      } finally {
        await receiver.close();
      }
    });
  },
  { FLAGPOST_OUTBOX_POLL_MS: '0', FLAGPOST_OUTBOX_RETRY_BASE_MS: '50', FLAGPOST_WEBHOOK_TARGETS: 'private' },
  { clock: () => manual.now },
);

/**
 * Names resolved by the tests' own resolver: nothing is looked up on the network, and every address
 * that could be connected to is on loopback (the suite's network rule).
 */
const resolved: Record<string, string> = { 'metadata.test': '169.254.169.254', 'rebind.test': '127.0.0.1', 'intranet.test': '10.0.0.7' };
const lookups: string[] = [];
const stubLookup: Lookup = (hostname, _options, callback) => {
  lookups.push(hostname);
  const address = resolved[hostname];
  if (!address) callback(Object.assign(new Error(`not found: ${hostname}`), { code: 'ENOTFOUND' }), []);
  else callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]);
};

for (const policy of ['public', 'private'] as const) {
  forEachDialect(
    `webhook targets under FLAGPOST_WEBHOOK_TARGETS=${policy} (issue 8)`,
    (ctx) => {
      const deliver = async (webhookUrl: string) => {
        const form = await createForm(ctx(), { webhookUrl });
        const id = (await submitJson(ctx(), form.key, { a: 1 })).json().id;
        await ctx().services.outbox.runOnce();
        return (await deliveriesOf(ctx, form.key, id))[0]!;
      };

      it('never contacts a link-local (cloud metadata) address by name, and refuses it literally upfront (issue 22)', async () => {
        const delivery = await deliver('http://metadata.test/latest/meta-data/');
        assert.equal(delivery.status, 'pending');
        assert.match(delivery.lastError, /^target refused: .*link-local address/);
        assert.equal(delivery.history[0].statusCode, null);
        assert.ok(lookups.includes('metadata.test'), 'the name was resolved by the stub, not the network');
        for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/']) {
          const refused = await ctx().admin('POST', '/admin/v1/forms', { name: 'Metadata', webhookUrl: url });
          assert.equal(refused.statusCode, 400, url);
          assert.match(refused.json().details[0].reason, new RegExp(`^points at .*, which deliveries never reach under FLAGPOST_WEBHOOK_TARGETS=${policy}$`));
          assert.equal(refused.json().details[0].field, 'body.webhookUrl');
        }
      });

      it(policy === 'public' ? 'refuses loopback and private targets' : 'reaches loopback and private targets', async () => {
        const receiver = await startWebhookReceiver();
        try {
          const port = new URL(receiver.url).port;
          const byName = await deliver(`http://rebind.test:${port}/hook`);
          if (policy === 'public') {
            // A literal loopback address is refused when it is set: no delivery could ever reach it.
            for (const url of [receiver.url, `http://localhost:${port}/hook`, `http://[::1]:${port}/hook`]) {
              const refused = await ctx().admin('POST', '/admin/v1/forms', { name: 'Local', webhookUrl: url });
              assert.equal(refused.statusCode, 400, url);
            }
            const form = await createForm(ctx(), {});
            const patched = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { slackWebhookUrl: receiver.url });
            assert.equal(patched.statusCode, 400);
            assert.equal(patched.json().details[0].field, 'body.slackWebhookUrl');
            assert.match(byName.lastError, /^target refused: .*not a public address/);
            assert.match((await deliver('http://intranet.test/hook')).lastError, /not a public address/);
            assert.equal(receiver.received.length, 0, 'nothing reached the receiver');
          } else {
            const literal = await deliver(receiver.url);
            for (const delivery of [literal, byName]) assert.equal(delivery.status, 'delivered');
            assert.equal(receiver.received.length, 2);
          }
        } finally {
          await receiver.close();
        }
      });
    },
    { FLAGPOST_OUTBOX_POLL_MS: '0', FLAGPOST_WEBHOOK_TARGETS: policy },
    { lookup: stubLookup },
  );
}
