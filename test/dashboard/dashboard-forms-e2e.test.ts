import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { buildDashboard } from '../../dashboard/build.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { ADMIN_TOKEN, createTestContext, type TestContext } from '../support/context.ts';
import { createForm, startWebhookReceiver, submitJson, waitFor } from '../support/forms.ts';
import { freePort, ROOT } from '../support/process.ts';

// Issue 34 in the dashboard, in headless Chromium: the form's screen saves field rules and shows the
// server's refusal, previews both e-mails rendered by the server; the inbox shows why a submission is spam
// and searches on the server; a failed delivery is re-sent from its submission; the analytics chart; the
// screens at 1280 and 390 px in the light and the dark theme, without sideways scrolling, with axe-core.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-dashboard-forms-'));

/**
 * axe-core over the page. The e-mail previews' frames are left out: a frame sandboxed without scripts
 * cannot run axe (the scan would wait for it), and what it shows is the form owner's e-mail, not the dashboard.
 */
async function axeScan(page: Page, screen: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).exclude('iframe.mail-frame').analyze();
  assert.deepEqual(
    violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`),
    [],
    screen,
  );
}

/** A signed-in page that records page errors and console errors (a CSP refusal is one). */
async function signedIn(browser: BrowserContext, base: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${m.text()} at ${m.location().url}`);
  });
  await page.goto(`${base}/sign-in`);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
  return { page, errors };
}

describe('dashboard form screens in headless Chromium (issue 34)', { skip: chromiumMissing }, () => {
  let ctx: TestContext;
  let base: string;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let formKey: string;
  const shots = path.join(ROOT, 'test-output', 'dashboard-forms');

  before(async () => {
    await buildDashboard(WEB_DIR);
    const port = freePort();
    base = `http://127.0.0.1:${port}`;
    // The first webhook attempt fails and is the last one: the delivery ends failed, then a re-send succeeds.
    receiver = await startWebhookReceiver([500]);
    ctx = await createTestContext('sqlite', {
      FLAGPOST_PUBLIC_URL: base,
      FLAGPOST_DASHBOARD_DIR: WEB_DIR,
      FLAGPOST_OUTBOX_POLL_MS: '20',
      FLAGPOST_OUTBOX_RETRY_BASE_MS: '50',
      FLAGPOST_OUTBOX_MAX_ATTEMPTS: '1',
      FLAGPOST_WEBHOOK_TARGETS: 'private',
    });
    await ctx.app.listen({ port, host: '127.0.0.1' });
    fs.mkdirSync(shots, { recursive: true });
    const form = await createForm(ctx, { name: 'Contact', honeypot: 'website', webhookUrl: receiver.url, spamChecks: { duplicates: { enabled: true } } });
    formKey = form.key;
    // Ada's webhook is the first the receiver gets (and fails); the others come after it.
    const ada = await submitJson(ctx, formKey, { name: 'Ada', email: 'ada@example.com', topic: 'sales', message: 'A quote for 40 seats, please' });
    assert.equal(ada.statusCode, 200, ada.body);
    await waitFor(() => receiver.received.length === 1, 5000, "Ada's webhook");
    for (const [i, data] of [
      { name: 'Bob', email: 'bob@example.com', topic: 'support', message: 'The export button does nothing' },
      { name: 'Bot', email: 'bot@example.com', website: 'http://spam.example', message: 'Cheap watches' },
      // The same fields as Ada's: the duplicates check calls it spam.
      { name: 'Ada', email: 'ada@example.com', topic: 'sales', message: 'A quote for 40 seats, please' },
    ].entries()) {
      const res = await submitJson(ctx, formKey, data);
      assert.equal(res.statusCode, 200, `${i}: ${res.body}`);
    }
    await waitFor(async () => {
      const list = (await ctx.admin('GET', `/admin/v1/forms/${formKey}/submissions?spam=false`)).json();
      const details = await Promise.all(
        list.submissions.map(async (s: { id: string }) => (await ctx.admin('GET', `/admin/v1/forms/${formKey}/submissions/${s.id}`)).json()),
      );
      return details.every((d: { deliveries: Array<{ status: string }> }) => d.deliveries.every((x) => x.status !== 'pending'));
    });
  });
  after(async () => {
    await ctx?.close();
    await receiver?.close();
  });

  it('saves field rules, shows the server refusing one, and previews both e-mails rendered by the server', { timeout: 120_000 }, async () => {
    const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const { page, errors } = await signedIn(browser, base);
      await page.goto(`${base}/forms/${formKey}`);
      await page.getByRole('heading', { name: 'Contact', level: 1 }).waitFor();

      const rules = page.getByRole('form', { name: 'Field rules' });
      await rules.getByLabel('Field rules (JSON Schema)').fill(JSON.stringify({ properties: { email: { type: 'string', format: 'phone' } } }));
      await rules.getByRole('button', { name: 'Save field rules' }).click();
      const refusal = rules.getByRole('alert');
      await refusal.waitFor();
      assert.match((await refusal.textContent()) ?? '', /Field rules › properties › e-mail › format: Choose one of the offered values/);
      await rules.getByLabel('Field rules (JSON Schema)').fill('{"required": ["email"], "properties": {"email": {"type": "string", "format": "email"}}}');
      await rules.getByRole('button', { name: 'Save field rules' }).click();
      await page.getByText('Saved the field rules').waitFor();
      const saved = (await ctx.admin('GET', `/admin/v1/forms/${formKey}`)).json();
      assert.deepEqual(saved.fieldRules, { required: ['email'], properties: { email: { type: 'string', format: 'email' } } });

      const notifications = page.getByRole('form', { name: 'Notifications' });
      await notifications.getByLabel('Subject').fill('New message from {{ name }}');
      await notifications.getByLabel('CC', { exact: true }).fill('team@example.com');
      const autoResponse = page.getByRole('form', { name: 'Auto-response' });
      await autoResponse.getByRole('switch', { name: 'Send an auto-response' }).click();
      await autoResponse.getByLabel('Body (HTML)').fill('<p style="color: #0a5">Hi {{ name }}, thanks for writing.</p><style>p { margin: 2em }</style>');
      await page.getByRole('button', { name: 'Preview e-mails' }).click();
      const previews = page.locator('.mail-previews');
      await previews.waitFor();
      await previews.getByText('New message from Ada Lovelace').waitFor();
      await previews.getByText('team@example.com').waitFor();
      const notification = page.frameLocator('iframe[title="Notification e-mail, HTML part"]');
      await notification.getByText('Open submission').waitFor();
      assert.match((await notification.locator('body').textContent()) ?? '', /Ada Lovelace/);
      const confirmation = page.frameLocator('iframe[title="Auto-response e-mail, HTML part"]');
      const paragraph = confirmation.getByText('Hi Ada Lovelace, thanks for writing.');
      await paragraph.waitFor();
      assert.equal(await paragraph.evaluate((p) => getComputedStyle(p).color), 'rgb(0, 170, 85)', "the e-mail's own style applies inside the frame");
      assert.equal(await paragraph.evaluate((p) => getComputedStyle(p).marginTop), '28px', "the e-mail's <style> applies too: 2em of the body's 14px");
      assert.equal(await page.locator('iframe.mail-frame').first().getAttribute('sandbox'), 'allow-same-origin', 'no scripts in the frame');
      const nothingSaved = (await ctx.admin('GET', `/admin/v1/forms/${formKey}`)).json();
      assert.deepEqual([nothingSaved.notifications, nothingSaved.autoResponse], [null, null], 'a preview saves nothing');
      await notifications.getByRole('button', { name: 'Save notifications' }).click();
      await page.getByText('Saved the notification settings').waitFor();
      assert.deepEqual((await ctx.admin('GET', `/admin/v1/forms/${formKey}`)).json().notifications, {
        subject: 'New message from {{ name }}',
        cc: ['team@example.com'],
      });
      // The one refused PATCH above is the browser's only complaint: no CSP refusal from the previews.
      assert.deepEqual(
        errors.map((e) => e.replace(/\/forms\/[^/]+$/, '/forms/{formKey}')),
        [`Failed to load resource: the server responded with a status of 400 (Bad Request) at ${base}/admin/v1/forms/{formKey}`],
      );
    } finally {
      await browser.close();
    }
  });

  it('tries spam checks in a dry run before saving them', { timeout: 60_000 }, async () => {
    const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const { page, errors } = await signedIn(browser, base);
      await page.goto(`${base}/forms/${formKey}`);
      const spam = page.getByRole('form', { name: 'Spam checks' });
      await spam.getByRole('button', { name: 'Add condition to the spam rule' }).click();
      await spam.getByLabel('Attribute').fill('topic');
      await spam.getByLabel('Values', { exact: true }).fill('support');
      await spam.getByRole('button', { name: 'Dry run on the last 1,000' }).click();
      const result = page.getByRole('status', { name: 'Dry run result' });
      await result.waitFor();
      assert.match((await result.textContent()) ?? '', /Of the last 4 submissions, these checks call 3 spam; 1 verdict would change/);
      await result.getByRole('row', { name: /Not spam.*Spam.*rule/ }).waitFor();
      assert.equal((await ctx.admin('GET', `/admin/v1/forms/${formKey}`)).json().spamChecks.rules, undefined, 'a dry run saves nothing');
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });

  it('shows why submissions are spam in the inbox, and re-sends a failed delivery', { timeout: 60_000 }, async () => {
    const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const { page, errors } = await signedIn(browser, base);
      await page.goto(`${base}/forms/${formKey}/submissions?spam=true`);
      const table = page.getByRole('table', { name: 'Submissions' });
      await table.waitFor();
      await table.getByRole('row', { name: /Bot.*Honeypot/ }).waitFor();
      await table.getByRole('row', { name: /Ada.*Duplicate/ }).waitFor();
      assert.equal(await table.locator('tbody tr').count(), 2);
      await page.getByLabel('Caught by').selectOption('honeypot');
      await table.getByRole('row', { name: /Ada.*Duplicate/ }).waitFor({ state: 'detached' });
      assert.equal(await table.locator('tbody tr').count(), 1);

      await page.goto(`${base}/forms/${formKey}/submissions?spam=false`);
      await page.getByRole('table', { name: 'Submissions' }).getByRole('link').first().waitFor();
      await page.getByRole('table', { name: 'Submissions' }).getByRole('row', { name: /Ada/ }).getByRole('link').click();
      await page.getByRole('heading', { name: 'Submission', level: 1 }).waitFor();
      const before = receiver.received.length;
      await page.getByRole('heading', { name: /webhook to .*failed/ }).waitFor();
      await page.getByRole('button', { name: /^Re-send the webhook to/ }).click();
      await page.getByText(/Queued the webhook to .* again/).waitFor();
      await waitFor(() => receiver.received.length > before, 5000, 'the re-sent webhook');
      await page.reload();
      await page.getByRole('heading', { name: /webhook to .*delivered/ }).waitFor();
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });

  it('searches every submission on the server, filters by a field and turns the order', { timeout: 60_000 }, async () => {
    const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const { page, errors } = await signedIn(browser, base);
      await page.goto(`${base}/forms/${formKey}/submissions?spam=false`);
      const table = page.getByRole('table', { name: 'Submissions' });
      await table.getByRole('row', { name: /Bob/ }).waitFor();
      const rows = () => table.locator('tbody tr td:nth-child(2)').allTextContents();
      assert.match((await rows())[0]!, /^name: Bob/, 'newest first');
      await page.getByLabel('Order').selectOption('asc');
      await waitFor(async () => /^name: Ada/.test((await rows())[0] ?? ''), 5000, 'oldest first');

      await page.getByLabel('Search').fill('export button');
      await waitFor(
        async () => {
          const shown = await rows();
          return shown.length === 1 && /Bob/.test(shown[0]!);
        },
        5000,
        'the search on the server',
      );
      await page.getByLabel('Search').fill('');
      await page.getByLabel('Field').fill('topic');
      await page.getByLabel('Equals').fill('sales');
      await waitFor(
        async () => {
          const shown = await rows();
          return shown.length === 1 && /Ada/.test(shown[0]!);
        },
        5000,
        'the field filter',
      );
      await page.getByLabel('Equals').fill('nobody');
      await page.getByText('No submission matches.').waitFor();
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });

  it('makes a read token shown once that reads the submissions, and deletes it', { timeout: 60_000 }, async () => {
    const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const { page, errors } = await signedIn(browser, base);
      await page.goto(`${base}/forms/${formKey}`);
      const section = page.getByRole('region', { name: 'Read tokens', exact: true });
      await section.getByText('No read token').waitFor();
      await section.getByLabel('Token name').fill('CRM sync');
      await section.getByRole('button', { name: 'Create read token' }).click();
      const token = await section.getByRole('textbox', { name: 'Read token CRM sync' }).inputValue();
      assert.match(token, /^fpf_/);
      const read = await ctx.app.inject({ method: 'GET', url: `/admin/v1/forms/${formKey}/submissions`, headers: { authorization: `Bearer ${token}` } });
      assert.equal(read.statusCode, 200, read.body);
      await section.getByRole('row', { name: /CRM sync/ }).waitFor();
      await section.getByRole('button', { name: 'Delete read token CRM sync' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete read token' }).click();
      await section.getByText('No read token').waitFor();
      const refused = await ctx.app.inject({ method: 'GET', url: `/admin/v1/forms/${formKey}/submissions`, headers: { authorization: `Bearer ${token}` } });
      assert.equal(refused.statusCode, 401);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });

  it("draws the form's analytics for 30 days", { timeout: 60_000 }, async () => {
    const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const { page, errors } = await signedIn(browser, base);
      await page.goto(`${base}/forms/${formKey}`);
      const section = page.getByRole('region', { name: 'Last 30 days' });
      await section.getByRole('img', { name: /^submissions, spam, delivery failures per day from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d$/ }).waitFor();
      assert.match((await section.locator('dl.totals').textContent()) ?? '', /^Submissions[1-9]\d*Spam2Delivery failures\d+$/);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });

  for (const theme of ['light', 'dark'] as const) {
    for (const width of [1280, 390] as const) {
      it(`shows the form, inbox and submission screens at ${width} px in the ${theme} theme`, { timeout: 120_000 }, async () => {
        const browser = await launchChromium({ viewport: { width, height: 860 }, colorScheme: theme });
        try {
          const { page, errors } = await signedIn(browser, base);
          const spam = (await ctx.admin('GET', `/admin/v1/forms/${formKey}/submissions?spam=true`)).json().submissions[0].id;
          for (const [name, url, heading] of [
            ['form', `/forms/${formKey}`, 'Contact'],
            ['inbox-spam', `/forms/${formKey}/submissions?spam=true`, 'Contact submissions'],
            ['submission', `/forms/${formKey}/submissions/${spam}`, 'Submission'],
          ] as const) {
            await page.goto(`${base}${url}`);
            await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
            await page.waitForFunction(() => !document.querySelector('.loading'));
            if (name === 'form') {
              await page.getByRole('button', { name: 'Preview e-mails' }).click();
              await page.locator('iframe.mail-frame').first().waitFor();
            }
            if (name !== 'form') await page.locator('ul.spam-reasons').first().waitFor();
            const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
            assert.ok(sideways <= 0, `${name} scrolls sideways by ${sideways} px at ${width} px`);
            const background = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
            assert.equal(background === 'rgb(15, 20, 25)', theme === 'dark', `${name} background ${background} in ${theme}`);
            await page.screenshot({ path: path.join(shots, `${name}-${theme}-${width}.png`), fullPage: true });
            await axeScan(page, `${name} (${theme}, ${width} px)`);
          }
          assert.deepEqual(errors, []);
        } finally {
          await browser.close();
        }
      });
    }
  }
});
