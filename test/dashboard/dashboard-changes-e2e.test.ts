import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { buildDashboard } from '../../dashboard/build.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createTestContext, dialects, type TestContext } from '../support/context.ts';
import { freePort, ROOT } from '../support/process.ts';

// Issue 24 in headless Chromium, on both engines: an editor proposes a change on protected production,
// a second editor approves and schedules it, the clock passes (the clock port of the app under test: the
// real time plus an offset the test moves), and production's OFREP answer changes. Every screen of change
// management is scanned with axe-core and photographed under test-output/dashboard-changes/<engine>/.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-dashboard-changes-'));
const PASSWORD = 'a long test password 0123';

async function axeScan(page: Page, screen: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `axe on ${screen}`,
  );
}

for (const dialect of dialects()) {
  describe(`dashboard change management in headless Chromium [${dialect}]`, { skip: chromiumMissing }, () => {
    let ctx: TestContext;
    let base: string;
    let browser: BrowserContext;
    let offsetMs = 0;
    const shots = path.join(ROOT, 'test-output', 'dashboard-changes', dialect);

    before(async () => {
      await buildDashboard(WEB_DIR);
      const port = freePort();
      base = `http://127.0.0.1:${port}`;
      ctx = await createTestContext(dialect, { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: WEB_DIR }, { clock: () => new Date(Date.now() + offsetMs) });
      await ctx.app.listen({ port, host: '127.0.0.1' });
      fs.mkdirSync(shots, { recursive: true });
      browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    });
    after(async () => {
      await browser?.close();
      await ctx?.close();
    });

    const screen = async (page: Page, name: string) => {
      await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
      await axeScan(page, name);
    };

    const signIn = async (page: Page, email: string) => {
      await page.goto(`${base}/sign-in`);
      await page.getByLabel('E-mail address').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('link', { name: 'Projects' }).first().waitFor();
    };

    const production = async (projectKey: string, envKey: string) => {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/ofrep/v1/evaluate/flags/banner',
        headers: { 'content-type': 'application/json', 'x-project-key': projectKey, 'x-environment-key': envKey },
        payload: JSON.stringify({ context: { targetingKey: 'visitor-1' } }),
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().value as string;
    };

    it(
      'an editor proposes a change on protected production, another approves and schedules it, and it applies when the time comes',
      { timeout: 300_000 },
      async () => {
        for (const [email, role] of [
          ['owner@example.com', 'owner'],
          ['ann@example.com', 'editor'],
          ['bob@example.com', 'editor'],
        ] as const) {
          assert.equal((await ctx.admin('POST', '/admin/v1/users', { email, password: PASSWORD, role })).statusCode, 201);
        }
        const project = (await ctx.admin('POST', '/admin/v1/projects', { name: 'Web shop' })).json() as { key: string; environments: Array<{ key: string }> };
        const prod = project.environments[2]!.key;
        const created = await ctx.admin('POST', `/admin/v1/projects/${project.key}/flags`, {
          slug: 'banner',
          type: 'string',
          variants: { a: 'Welcome', b: 'Winter sale' },
          defaultVariant: 'a',
          enabled: true,
        });
        assert.equal(created.statusCode, 201, created.body);
        const page = await browser.newPage();

        // The owner protects production in the dashboard.
        await signIn(page, 'owner@example.com');
        await page.goto(`${base}/projects/${project.key}/changes`);
        await page.getByLabel('Protect production').check();
        await page.getByRole('button', { name: 'Save production' }).click();
        await page.getByRole('button', { name: 'Save production' }).isEnabled();
        for (let i = 0; i < 50 && !(await ctx.admin('GET', `/admin/v1/projects/${project.key}`)).json().environments[2].protected; i++) {
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal((await ctx.admin('GET', `/admin/v1/projects/${project.key}`)).json().environments[2].protected, true);
        await page.getByRole('button', { name: 'Sign out' }).click();

        // Ann proposes by editing the flag as usual; a direct write would be refused. The change requests'
        // page says how, and asks no one to write JSON (issue 31 item 4).
        await signIn(page, 'ann@example.com');
        await page.goto(`${base}/projects/${project.key}/changes`);
        await page.getByRole('heading', { name: 'Propose a change' }).waitFor();
        await page.getByText('Edit the flag as usual').waitFor();
        assert.equal(await page.locator('main textarea').count(), 0, 'no JSON to write');
        assert.equal(await page.getByText(/JSON/).count(), 0, 'no JSON to write');
        await screen(page, 'change-requests');
        await page.goto(`${base}/projects/${project.key}/flags/banner`);
        await page.getByRole('tab', { name: 'production' }).click();
        await page.getByLabel('Default serve in production').selectOption('b');
        await page.getByRole('button', { name: 'Save targeting in production for review' }).click();
        const dialog = page.getByRole('dialog', { name: 'production is protected' });
        await dialog.getByLabel('Title of the change request').fill('Winter sale banner in production');
        await dialog.getByRole('button', { name: 'Propose for review' }).click();
        await dialog.getByRole('link', { name: 'The change request' }).click();
        await page.getByRole('heading', { name: 'Winter sale banner in production' }).waitFor();
        await page.getByText('In review', { exact: true }).waitFor();
        // Issue 31 item 5: the author is offered no Approve (the server would refuse it), and neither
        // Schedule nor Apply now before the approval.
        await page.getByText('another member approves it').waitFor();
        assert.equal(await page.getByRole('button', { name: 'Approve' }).count(), 0, 'the author sees no Approve');
        assert.equal(await page.getByRole('button', { name: 'Schedule', exact: true }).count(), 0, 'no Schedule before approval');
        assert.equal(await page.getByRole('button', { name: 'Apply now' }).count(), 0, 'no Apply now before approval');
        await screen(page, 'change-request-in-review');
        const url = page.url();
        await page.getByRole('button', { name: 'Sign out' }).click();

        // Bob approves; then he is offered no second Approve, and Apply now on protected production asks first.
        await signIn(page, 'bob@example.com');
        await page.goto(url);
        assert.equal(await page.getByRole('button', { name: 'Schedule', exact: true }).count(), 0, 'no Schedule before approval');
        await page.getByRole('button', { name: 'Approve' }).click();
        await page.getByText('Approved', { exact: true }).waitFor();
        await page.getByRole('button', { name: 'Apply now' }).waitFor();
        assert.equal(await page.getByRole('button', { name: 'Approve' }).count(), 0, 'who approved sees no Approve');
        await page.getByRole('button', { name: 'Apply now' }).click();
        const confirm = page.getByRole('dialog', { name: 'Apply to production now?' });
        await confirm.waitFor();
        await screen(page, 'change-request-apply-confirm');
        await confirm.getByRole('button', { name: 'Cancel' }).click();
        await confirm.waitFor({ state: 'hidden' });
        assert.equal(await production(project.key, prod), 'Welcome', 'cancelling the confirmation applies nothing');
        await page.getByRole('button', { name: 'Schedule', exact: true }).click();
        await page.getByText('Scheduled', { exact: true }).waitFor();
        await screen(page, 'change-request-scheduled');
        assert.equal(await production(project.key, prod), 'Welcome');
        assert.equal(await ctx.services.changeScheduler.runOnce(), 0, 'not due yet');

        // Two hours pass.
        offsetMs = 2 * 3_600_000;
        assert.equal(await ctx.services.changeScheduler.runOnce(), 1);
        assert.equal(await production(project.key, prod), 'Winter sale');
        await page.reload();
        await page.getByText('Applied', { exact: true }).waitFor();

        await page.goto(`${base}/projects/${project.key}/compare`);
        await page.getByRole('heading', { name: 'Compare environments' }).waitFor();
        await page.getByRole('row', { name: /banner/ }).waitFor();
        await screen(page, 'compare');
        await page.close();
      },
    );
  });
}
