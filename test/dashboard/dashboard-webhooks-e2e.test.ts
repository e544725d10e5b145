import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { BrowserContext } from 'playwright-core';
import { buildDashboard } from '../../dashboard/build.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { ADMIN_TOKEN, createTestContext, type TestContext } from '../support/context.ts';
import { createFlag, createProject } from '../support/fixtures.ts';
import { startWebhookReceiver, verifyWebhook, waitFor } from '../support/forms.ts';
import { freePort, ROOT } from '../support/process.ts';

// Issue 23 in the dashboard: a project's Webhooks screen (create with the secret shown once, the
// deliveries of a flag change, a redelivery, deletion with confirmation), in headless Chromium, scanned
// with axe-core. The receiver is a real one on loopback.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-dashboard-webhooks-'));

describe('dashboard webhooks screen in headless Chromium', { skip: chromiumMissing }, () => {
  let ctx: TestContext;
  let base: string;
  let browser: BrowserContext;
  const shots = path.join(ROOT, 'test-output', 'dashboard-webhooks');

  before(async () => {
    await buildDashboard(WEB_DIR);
    const port = freePort();
    base = `http://127.0.0.1:${port}`;
    ctx = await createTestContext('sqlite', {
      FLAGPOST_PUBLIC_URL: base,
      FLAGPOST_DASHBOARD_DIR: WEB_DIR,
      FLAGPOST_OUTBOX_POLL_MS: '50',
      FLAGPOST_WEBHOOK_TARGETS: 'private',
    });
    await ctx.app.listen({ port, host: '127.0.0.1' });
    fs.mkdirSync(shots, { recursive: true });
    browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    await ctx?.close();
  });

  it('creates a webhook, shows its secret once, lists its deliveries, redelivers and deletes it', { timeout: 120_000 }, async () => {
    const receiver = await startWebhookReceiver();
    try {
      const project = await createProject(ctx, 'Hooked shop');
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${base}/sign-in`);
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      const scan = async (name: string) => {
        await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
        const { violations } = await new AxeBuilder({ page }).analyze();
        assert.deepEqual(
          violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`),
          [],
          name,
        );
      };

      await page.goto(`${base}/projects/${project.key}`);
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByText('No webhook: flag changes are not sent anywhere.').waitFor();
      await page.getByLabel('URL').fill(receiver.url);
      await page.getByLabel('change_request.opened').uncheck();
      await page.getByRole('button', { name: 'Create webhook' }).click();
      const secret = (await page.getByText(/^whsec_/).textContent()) ?? '';
      assert.match(secret, /^whsec_/);
      const row = page.getByRole('row', { name: new RegExp(receiver.url.replace(/[.]/g, '\\.')) });
      await row.waitFor();
      assert.match((await row.textContent()) ?? '', /flag\.created, flag\.updated/);
      await scan('webhooks');

      await createFlag(ctx, project.key, { slug: 'announced' });
      await waitFor(() => receiver.received.length === 1, 5000, 'the event');
      assert.ok(verifyWebhook(secret, receiver.received[0]!.headers, receiver.received[0]!.body), 'signed with the secret the screen showed');

      await row.getByRole('button', { name: 'Deliveries' }).click();
      const deliveries = page.getByRole('table').nth(1);
      await deliveries.getByRole('row', { name: /flag\.created.*delivered/ }).waitFor();
      await scan('webhook-deliveries');
      await deliveries.getByRole('button', { name: 'Redeliver' }).click();
      await waitFor(() => receiver.received.length === 2, 5000, 'the redelivery');
      assert.equal(receiver.received[1]!.body, receiver.received[0]!.body);

      await row.getByRole('button', { name: 'Delete' }).click();
      const dialog = page.getByRole('dialog');
      const id = ((await dialog.getByRole('heading').textContent()) ?? '').replace(/^Delete webhook (.*)\?$/, '$1');
      await dialog.getByRole('textbox').fill(id);
      await dialog.getByRole('button', { name: 'Delete webhook' }).click();
      await page.getByText('No webhook: flag changes are not sent anywhere.').waitFor();
      assert.equal((await ctx.admin('GET', `/admin/v1/projects/${project.key}/webhooks`)).json().webhooks.length, 0);
      assert.deepEqual(errors, []);
    } finally {
      await receiver.close();
    }
  });
});
