import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { type AddressObject, simpleParser } from 'mailparser';
import { forEachDialect } from '../support/context.ts';
import { createForm, type ReceivedMail, startSmtpServer, startWebhookReceiver, submitJson, waitFor } from '../support/forms.ts';

// Issue 34 item 1 and 2: e-mail people can answer, and a confirmation for the sender, read back from a
// real SMTP server on loopback (headers, both parts, hostile field values).

const smtp = await startSmtpServer();
after(() => smtp.close());

const parse = (mail: ReceivedMail) => simpleParser(mail.raw);
const addresses = (field: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(field) ? field : field ? [field] : []).flatMap((a) => a.value.map((v) => v.address));
/** The messages the server got after `before` once there are `count` of them. */
async function received(before: number, count: number): Promise<ReceivedMail[]> {
  await waitFor(() => smtp.messages.length >= before + count, 5000, `${count} e-mails`);
  return smtp.messages.slice(before);
}

forEachDialect(
  'form e-mail: Reply-To, templates, CC/BCC, HTML part, auto-response (issue 34)',
  (ctx) => {
    it('sends a notification people can answer: Reply-To, subject and sender templates, CC and BCC, an HTML and a text part', async () => {
      const form = await createForm(ctx(), {
        name: 'Contact',
        notifyEmails: ['ops@example.com'],
        notifications: { subject: 'New message from {{ name }}', fromName: '{{ name }} via Flagpost', cc: ['cc@example.com'], bcc: ['bcc@example.com'] },
      });
      const before = smtp.messages.length;
      const res = await submitJson(ctx(), form.key, { name: 'Ada', email: 'ada@example.com', message: 'Hello\nsecond line' });
      assert.equal(res.statusCode, 200);
      const [mail] = await received(before, 1);
      assert.deepEqual(mail!.to.sort(), ['bcc@example.com', 'cc@example.com', 'ops@example.com'], 'the envelope holds every recipient');
      const parsed = await parse(mail!);
      assert.equal(parsed.subject, 'New message from Ada');
      assert.deepEqual(addresses(parsed.replyTo), ['ada@example.com']);
      assert.deepEqual(addresses(parsed.cc), ['cc@example.com']);
      assert.equal(parsed.bcc, undefined, 'BCC is not a header');
      assert.equal((parsed.from as AddressObject).value[0]!.name, 'Ada via Flagpost');
      assert.equal((parsed.from as AddressObject).value[0]!.address, 'forms@flagpost.test');
      assert.match(String(parsed.html), /<th[^>]*>message<\/th><td[^>]*>Hello<br \/>\s*second line<\/td>/);
      assert.ok(
        String(parsed.html).includes(`http://localhost:3000/forms/${form.key}/submissions/${res.json().id}`) ||
          String(parsed.html).includes(`/forms/${form.key}/submissions/${res.json().id}`),
      );
      assert.match(parsed.text ?? '', /^message +Hello$/m);
      assert.match(parsed.text ?? '', /^ +second line$/m);
    });

    it('escapes hostile field values and keeps CR/LF in a subject field from making headers', async () => {
      const form = await createForm(ctx(), { notifyEmails: ['ops@example.com'], notifications: { subject: 'From {{ name }}' } });
      const before = smtp.messages.length;
      await submitJson(ctx(), form.key, {
        name: 'Eve\r\nBcc: victim@evil.example\r\nX-Injected: yes',
        email: 'eve@example.com\r\nBcc: victim@evil.example',
        message: '<script>alert(1)</script><img src=x onerror=alert(2)>',
      });
      const [mail] = await received(before, 1);
      assert.deepEqual(mail!.to, ['ops@example.com'], 'no recipient was injected');
      const parsed = await parse(mail!);
      assert.equal(parsed.subject, 'From Eve Bcc: victim@evil.example X-Injected: yes');
      assert.equal(parsed.headers.get('x-injected'), undefined);
      assert.equal(parsed.headers.get('bcc'), undefined);
      assert.equal(parsed.replyTo, undefined, 'an address with a line break is no Reply-To');
      const html = String(parsed.html);
      assert.ok(!html.includes('<script>') && !html.includes('<img'), html);
      assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
      assert.ok((parsed.text ?? '').includes('<script>alert(1)</script>'), 'the text part shows the value as text');
    });

    it('sends the auto-response to the submitter, once per address and form in 10 minutes, never for spam', async () => {
      const form = await createForm(ctx(), {
        autoResponse: {
          enabled: true,
          subject: 'Thanks, {{ name }}',
          body: '<p>Hi {{ name }}, we read every message.</p>',
          replyTo: 'team@example.com',
          includeSubmission: true,
        },
      });
      const before = smtp.messages.length;
      const first = await submitJson(ctx(), form.key, { name: 'Ada', email: 'Ada@Example.com', message: 'one' });
      const [mail] = await received(before, 1);
      assert.deepEqual(mail!.to, ['ada@example.com']);
      const parsed = await parse(mail!);
      assert.equal(parsed.subject, 'Thanks, Ada');
      assert.deepEqual(addresses(parsed.replyTo), ['team@example.com']);
      assert.match(String(parsed.html), /<p>Hi Ada, we read every message.<\/p>/);
      assert.match(parsed.text ?? '', /^message +one$/m);

      const again = await submitJson(ctx(), form.key, { name: 'Ada', email: 'ada@example.com', message: 'two' });
      const spam = await submitJson(ctx(), form.key, { name: 'Bot', email: 'bot@example.com', _trap: 'x' });
      const other = await submitJson(ctx(), form.key, { name: 'Bob', email: 'bob@example.com' });
      await received(before, 2);
      await ctx().services.outbox.runOnce();
      assert.deepEqual(
        smtp.messages.slice(before).map((m) => m.to[0]),
        ['ada@example.com', 'bob@example.com'],
      );
      const kinds = async (id: string) =>
        (await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${id}`))
          .json()
          .deliveries.map((d: { kind: string; status: string }) => `${d.kind}:${d.status}`);
      assert.deepEqual(await kinds(first.json().id), ['autoresponse:delivered']);
      assert.deepEqual(await kinds(again.json().id), [], 'the second within 10 minutes is not sent');
      assert.deepEqual(await kinds(spam.json().id), []);
      assert.deepEqual(await kinds(other.json().id), ['autoresponse:delivered']);
    });

    it('refuses settings it cannot use: a template that does not parse, a file tag, a bad address or condition', async () => {
      const form = await createForm(ctx());
      const patch = (body: unknown) => ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, body);
      const cases: Array<[unknown, string]> = [
        [{ notifications: { subject: 'Hi {{ name ' } }, 'body.notifications.subject'],
        [{ notifications: { subject: '{{ name | nosuchfilter }}' } }, 'body.notifications.subject'],
        [{ autoResponse: { enabled: true, subject: 'x', body: "{% include '/etc/passwd' %}" } }, 'body.autoResponse.body'],
        [{ autoResponse: { enabled: true, subject: 'x', body: 'y', replyTo: 'not-an-address' } }, 'body.autoResponse.replyTo'],
        [{ notifications: { cc: ['nope'] } }, 'body.notifications.cc.0'],
        [{ webhooks: [{ url: 'ftp://x' }] }, 'body.webhooks.0.url'],
        [
          { webhooks: [{ url: 'http://127.0.0.1/x', conditions: [{ attribute: 'topic', operator: 'lt', values: ['not a number'] }] }] },
          'body.webhooks.0.conditions.0',
        ],
      ];
      for (const [body, field] of cases) {
        const res = await patch(body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.ok(
          (res.json().details as Array<{ field: string }>).some((d) => d.field.startsWith(field)),
          `${JSON.stringify(body)}: ${res.body}`,
        );
      }
      const unchanged = (await ctx().admin('GET', `/admin/v1/forms/${form.key}`)).json();
      assert.deepEqual([unchanged.notifications, unchanged.autoResponse, unchanged.webhooks], [null, null, []], 'a refused PATCH changes nothing');
    });

    it('sends a test of every delivery at once and stores nothing', async () => {
      const receiver = await startWebhookReceiver();
      try {
        const form = await createForm(ctx(), {
          webhookUrl: receiver.url,
          notifyEmails: ['ops@example.com'],
          notifications: { subject: 'Test from {{ name }}' },
          autoResponse: { enabled: true, subject: 'Thanks', body: '<p>Thanks</p>' },
        });
        const before = smtp.messages.length;
        const res = await ctx().admin('POST', `/admin/v1/forms/${form.key}/test-delivery`, { data: { name: 'Tess', email: 'tess@example.com' } });
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(
          res
            .json()
            .deliveries.map((d: { kind: string; target: string; ok: boolean }) => `${d.kind} ${d.target} ${d.ok}`)
            .sort(),
          ['autoresponse tess@example.com true', 'email ops@example.com true', `webhook ${receiver.url} true`],
        );
        const mails = await received(before, 2);
        const subjects = (await Promise.all(mails.map(parse))).map((m) => m.subject).sort();
        assert.deepEqual(subjects, ['Test from Tess', 'Thanks']);
        assert.equal(receiver.received.length, 1);
        const list = (await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions`)).json();
        assert.equal(list.submissions.length, 0, 'no submission is stored');
        const bare = await ctx().admin('POST', `/admin/v1/forms/${form.key}/test-delivery`, {});
        assert.deepEqual(
          bare
            .json()
            .deliveries.map((d: { kind: string }) => d.kind)
            .sort(),
          ['email', 'webhook'],
          'no address: no auto-response',
        );
        assert.equal((await ctx().admin('POST', '/admin/v1/forms/nope/test-delivery', {})).statusCode, 404);
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
    FLAGPOST_OUTBOX_MAX_ATTEMPTS: '2',
    FLAGPOST_WEBHOOK_TARGETS: 'private',
  },
);
