import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { forEachDialect } from '../support/context.ts';
import { createForm, startSmtpServer, startWebhookReceiver, submitJson, verifyWebhook, waitFor } from '../support/forms.ts';

// Issue 34 items 3 and 4: notification addresses and webhooks by conditions on fields, several webhooks
// per form, re-sending one delivery or every failed one, and the owners' e-mail when a delivery failed.

const smtp = await startSmtpServer();
after(() => smtp.close());

const topic = (value: string) => [{ attribute: 'topic', operator: 'equals', values: [value] }];
type Delivery = { id: string; kind: string; target: string; status: string; attempts: number; history: unknown[] };

forEachDialect(
  'form routing and deliveries (issue 34)',
  (ctx) => {
    const deliveries = async (formKey: string, id: string) =>
      (await ctx().admin('GET', `/admin/v1/forms/${formKey}/submissions/${id}`)).json().deliveries as Delivery[];

    it('routes notification addresses and webhooks by the fields, beside the form-wide ones', async () => {
      const [always, sales, support] = await Promise.all([startWebhookReceiver(), startWebhookReceiver(), startWebhookReceiver()]);
      try {
        const created = await createForm(ctx(), {
          webhookUrl: always.url,
          webhooks: [
            { url: sales.url, conditions: topic('sales') },
            { url: support.url, conditions: topic('support') },
          ],
          notifyEmails: ['all@example.com'],
          notifications: {
            routes: [
              { emails: ['sales@example.com'], conditions: topic('sales') },
              { emails: ['help@example.com'], conditions: [{ attribute: 'message', operator: 'matches', values: ['(?i)refund'] }] },
            ],
          },
        });
        const secret = created.webhookSecret!;
        const before = smtp.messages.length;
        const res = await submitJson(ctx(), created.key, { topic: 'sales', message: 'I want a REFUND' });
        await waitFor(() => always.received.length === 1 && sales.received.length === 1, 5000, 'two webhooks');
        await waitFor(() => smtp.messages.length >= before + 3, 5000, 'three e-mails');
        await ctx().services.outbox.runOnce();
        assert.equal(support.received.length, 0, 'the support webhook is not for sales');
        assert.ok(verifyWebhook(secret, sales.received[0]!.headers, sales.received[0]!.body), 'a routed webhook is signed with the form secret');
        assert.deepEqual(
          smtp.messages
            .slice(before)
            .map((m) => m.to[0])
            .sort(),
          ['all@example.com', 'help@example.com', 'sales@example.com'],
        );
        const kinds = (await deliveries(created.key, res.json().id)).map((d) => `${d.kind} ${d.target}`).sort();
        assert.deepEqual(kinds, [
          'email all@example.com',
          'email help@example.com',
          'email sales@example.com',
          ...[`webhook ${always.url}`, `webhook ${sales.url}`].sort(),
        ]);

        const other = await submitJson(ctx(), created.key, { topic: 'support', message: 'hello' });
        await waitFor(() => support.received.length === 1, 5000, 'the support webhook');
        const targets = (await deliveries(created.key, other.json().id)).map((d) => d.target).sort();
        assert.deepEqual(targets, ['all@example.com', always.url, support.url].sort());
      } finally {
        await Promise.all([always.close(), sales.close(), support.close()]);
      }
    });

    it('re-sends one delivery and every failed one, keeping the history, and e-mails the owners when one failed', async () => {
      await ctx().admin('POST', '/admin/v1/users', { email: 'owner@example.com', password: 'a long test password 0123', role: 'owner' });
      // Two attempts fail (FLAGPOST_OUTBOX_MAX_ATTEMPTS=2), then the receiver answers 200.
      const receiver = await startWebhookReceiver([500, 500]);
      try {
        const form = await createForm(ctx(), { name: 'Orders', webhookUrl: receiver.url });
        const before = smtp.messages.length;
        const id = (await submitJson(ctx(), form.key, { order: '42' })).json().id as string;
        const failed = await waitFor(async () => (await deliveries(form.key, id)).find((d) => d.status === 'failed'), 5000, 'a failed delivery');
        assert.equal(failed.history.length, 2);
        assert.equal(failed.kind, 'webhook');

        const alert = await waitFor(() => smtp.messages.slice(before).find((m) => m.to.includes('owner@example.com')), 5000, 'the alert');
        assert.deepEqual(alert.to, ['owner@example.com']);
        const parsed = await simpleParser(alert.raw);
        assert.equal(parsed.subject, 'Delivery failed: Orders');
        assert.ok(String(parsed.html).includes(`/forms/${form.key}/submissions/${id}`));
        assert.ok(!String(parsed.html).includes(receiver.url), 'the alert names no webhook URL');
        await waitFor(
          async () => (await deliveries(form.key, id)).some((d) => d.kind === 'alert' && d.status === 'delivered'),
          5000,
          'the alert in the history',
        );

        const all = await ctx().admin('POST', `/admin/v1/forms/${form.key}/deliveries/resend-failed`);
        assert.equal(all.statusCode, 200, all.body);
        assert.deepEqual(all.json(), { resent: 1 });
        const webhookOf = async () => (await deliveries(form.key, id)).find((d) => d.kind === 'webhook')!;
        const delivered = await waitFor(async () => ((await webhookOf()).status === 'delivered' ? webhookOf() : undefined), 5000, 'delivered');
        assert.equal(delivered.history.length, 3, 'the history keeps the failed attempts');
        assert.equal(receiver.received.length, 3);

        const one = await ctx().admin('POST', `/admin/v1/forms/${form.key}/deliveries/${delivered.id}/resend`);
        assert.equal(one.statusCode, 200, one.body);
        assert.equal(one.json().status, 'pending');
        await waitFor(() => receiver.received.length === 4, 5000, 'the re-sent webhook');
        assert.equal(receiver.received[3]!.body, receiver.received[0]!.body, 'the same body again');
        assert.deepEqual((await ctx().admin('POST', `/admin/v1/forms/${form.key}/deliveries/resend-failed`)).json(), { resent: 0 });

        const missing = await ctx().admin('POST', `/admin/v1/forms/${form.key}/deliveries/nope/resend`);
        assert.equal(missing.statusCode, 404);
        assert.equal(missing.json().message, `Delivery nope does not exist in form ${form.key}`);
        const other = await createForm(ctx());
        assert.equal((await ctx().admin('POST', `/admin/v1/forms/${other.key}/deliveries/${delivered.id}/resend`)).statusCode, 404, "another form's delivery");
      } finally {
        await receiver.close();
      }
    });

    it('answers 409 for a delivery that is still queued', async () => {
      const form = await createForm(ctx(), { webhookUrl: 'http://127.0.0.1:9/never' });
      await ctx().services.outbox.stop();
      try {
        const id = (await submitJson(ctx(), form.key, { a: '1' })).json().id as string;
        const [pending] = await deliveries(form.key, id);
        const res = await ctx().admin('POST', `/admin/v1/forms/${form.key}/deliveries/${pending!.id}/resend`);
        assert.equal(res.statusCode, 409);
        assert.equal(res.json().message, `Delivery ${pending!.id} is already queued; it is sent as soon as it is due`);
      } finally {
        ctx().services.outbox.start();
      }
    });
  },
  {
    SMTP_URL: smtp.url,
    SMTP_FROM: 'forms@flagpost.test',
    FLAGPOST_OUTBOX_POLL_MS: '20',
    FLAGPOST_OUTBOX_RETRY_BASE_MS: '50',
    FLAGPOST_OUTBOX_MAX_ATTEMPTS: '2',
    FLAGPOST_WEBHOOK_TARGETS: 'private',
  },
);
