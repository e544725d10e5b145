import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createForm, startWebhookReceiver, submitMultipart, waitFor } from '../support/forms.ts';

// Issue 12: Slack and Discord incoming-webhook presets on the outbox. The exact messages reach local
// receivers, unsigned, with the outbox's retries and delivery history; field text cannot mention
// anybody or break the markup.

const PUBLIC_URL = 'https://flags.example.com';

forEachDialect(
  'Slack and Discord deliveries',
  (ctx) => {
    it('posts the exact Slack and Discord messages of a submission, unsigned, and retries like a webhook', async () => {
      const slack = await startWebhookReceiver();
      const discord = await startWebhookReceiver([500]);
      try {
        const form = await createForm(ctx(), { name: 'Contact <us>', uploadsEnabled: true, slackWebhookUrl: slack.url, discordWebhookUrl: discord.url });
        assert.equal(form.slackWebhookUrl, slack.url);
        assert.equal(form.webhookSecret, undefined, 'chat presets need no signing secret');
        const res = await submitMultipart(ctx(), form.key, [
          { name: 'email', value: 'ada@example.com' },
          { name: 'message', value: 'Hi <!channel> @everyone & <@U123>' },
          { name: 'cv', filename: 'cv.pdf', content: '%PDF' },
        ]);
        assert.equal(res.statusCode, 200, res.body);
        const id = res.json().id as string;
        const detail = (await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${id}`)).json();
        const createdAt = detail.createdAt as string;
        const link = `${PUBLIC_URL}/forms/${form.key}/submissions/${id}`;

        await ctx().services.outbox.runOnce();
        await waitFor(() => slack.received.length === 1 && discord.received.length === 1, 5000, 'chat messages');
        assert.deepEqual(JSON.parse(slack.received[0]!.body), {
          text: 'New submission to Contact &lt;us&gt;',
          blocks: [
            { type: 'section', text: { type: 'mrkdwn', text: '*New submission to Contact &lt;us&gt;*' } },
            {
              type: 'section',
              fields: [
                { type: 'mrkdwn', text: '*email*\nada@example.com' },
                { type: 'mrkdwn', text: '*message*\nHi &lt;!channel&gt; @everyone &amp; &lt;@U123&gt;' },
              ],
            },
            { type: 'context', elements: [{ type: 'mrkdwn', text: `<${link}|Open in Flagpost>, 1 file` }] },
          ],
        });
        assert.deepEqual(JSON.parse(discord.received[0]!.body), {
          content: 'New submission to Contact <us>',
          embeds: [
            {
              title: 'Contact <us>',
              url: link,
              fields: [
                { name: 'email', value: 'ada@example.com' },
                { name: 'message', value: 'Hi <!channel> @everyone & <@U123>' },
              ],
              timestamp: createdAt,
              footer: { text: '1 file' },
            },
          ],
          allowed_mentions: { parse: [] },
        });
        for (const hook of [slack.received[0]!, discord.received[0]!]) {
          assert.equal(hook.headers['content-type'], 'application/json');
          assert.equal(hook.headers['webhook-signature'], undefined);
        }

        // Discord answered 500 first: retried like any webhook, with its history.
        await new Promise((r) => setTimeout(r, 80));
        await ctx().services.outbox.runOnce();
        await waitFor(() => discord.received.length === 2, 5000, 'the retry');
        const deliveries = await waitFor(async () => {
          const d = (await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${id}`)).json().deliveries as Array<{
            kind: string;
            status: string;
            history: Array<{ ok: boolean; statusCode: number | null }>;
          }>;
          return d.every((x) => x.status === 'delivered') && d;
        });
        assert.deepEqual(deliveries.map((d) => d.kind).sort(), ['discord', 'slack']);
        assert.deepEqual(
          deliveries.find((d) => d.kind === 'discord')!.history.map((h) => [h.ok, h.statusCode]),
          [
            [false, 500],
            [true, 200],
          ],
        );
        // Spam gets no chat message.
        await submitMultipart(ctx(), form.key, [
          { name: 'email', value: 'bot@example.com' },
          { name: '_trap', value: 'x' },
        ]);
        await ctx().services.outbox.runOnce();
        assert.equal(slack.received.length, 1);
      } finally {
        await slack.close();
        await discord.close();
      }
    });

    it('refuses chat webhook URLs that are not http(s)', async () => {
      const form = await createForm(ctx());
      for (const body of [{ slackWebhookUrl: 'ftp://x.example/hook' }, { discordWebhookUrl: 'not a url' }]) {
        const res = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
      }
      const cleared = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { slackWebhookUrl: null });
      assert.equal(cleared.json().slackWebhookUrl, null);
    });
  },
  { FLAGPOST_OUTBOX_POLL_MS: '0', FLAGPOST_OUTBOX_RETRY_BASE_MS: '50', FLAGPOST_WEBHOOK_TARGETS: 'private', FLAGPOST_PUBLIC_URL: PUBLIC_URL },
);
