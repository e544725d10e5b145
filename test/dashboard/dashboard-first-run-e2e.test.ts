import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { buildDashboard } from '../../dashboard/build.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { ADMIN_TOKEN, createTestContext, dialects, type TestContext } from '../support/context.ts';
import { freePort, ROOT } from '../support/process.ts';

// Issue 31 item 17 ("What a new user found", the first run) in headless Chromium, on both engines: with no
// account yet the sign-in page leads with the admin token, the only credential that works then, and with
// e-mail and password once an owner exists; Getting started's last step ticks itself when usage shows the
// first read of a flag. Screens are photographed under test-output/dashboard-first-run/<engine>/.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-dashboard-first-run-'));
const PASSWORD = 'a long test password 0123';

for (const dialect of dialects()) {
  describe(`dashboard first run in headless Chromium [${dialect}]`, { skip: chromiumMissing }, () => {
    let ctx: TestContext;
    let base: string;
    let browser: BrowserContext;
    const shots = path.join(ROOT, 'test-output', 'dashboard-first-run', dialect);

    before(async () => {
      await buildDashboard(WEB_DIR);
      const port = freePort();
      base = `http://127.0.0.1:${port}`;
      // Usage is written when the test says so (services.usage.flush), not on a timer.
      ctx = await createTestContext(dialect, { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: WEB_DIR, FLAGPOST_USAGE_FLUSH_MS: '0' });
      await ctx.app.listen({ port, host: '127.0.0.1' });
      fs.mkdirSync(shots, { recursive: true });
      browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    });
    after(async () => {
      await browser?.close();
      await ctx?.close();
    });

    /** The sign-in forms in the order the page shows them. */
    const signInForms = async (page: Page) => {
      await page.goto(`${base}/sign-in`);
      await page.getByLabel('Admin token').waitFor();
      return page.locator('main form').evaluateAll((forms) => forms.map((f) => f.getAttribute('aria-label')));
    };

    it(
      'leads with the admin token until an owner exists, ticks the first read from usage, then leads with e-mail and password',
      { timeout: 300_000 },
      async () => {
        const page = await browser.newPage();
        assert.deepEqual(await signInForms(page), ['Token sign-in', 'Account sign-in'], 'no account yet: the admin token first');
        await page.getByText('No account exists yet').waitFor();
        await page.screenshot({ path: path.join(shots, 'sign-in-first-run.png'), fullPage: true });
        await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
        await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
        await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();

        // A project and a flag, and Getting started waits for an app to read it.
        const project = (await ctx.admin('POST', '/admin/v1/projects', { name: 'Web shop' })).json() as { key: string; environments: Array<{ key: string }> };
        assert.equal((await ctx.admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'checkout' })).statusCode, 201);
        await page.reload();
        const checklist = page.getByRole('region', { name: 'Getting started' });
        await checklist.getByText('Done: Create a flag').waitFor();
        await checklist.getByText('To do: Read it from your app with the SDK snippet').waitFor();

        // An app reads the flag; once usage is written, the step ticks itself (the owner account is still to do).
        const read = await fetch(`${base}/v1/flags/checkout`, { headers: { 'x-project-key': project.key, 'x-environment-key': project.environments[0]!.key } });
        assert.equal(read.status, 200);
        await ctx.services.usage.flush();
        await page.reload();
        await checklist.getByText('Done: Read it from your app with the SDK snippet').waitFor();
        await checklist.getByText('To do: Create the first owner account').waitFor();
        await checklist.getByText('1 of 4 steps left.').waitFor();
        await page.screenshot({ path: path.join(shots, 'getting-started-read.png'), fullPage: true });

        // Once the owner exists, the sign-in page leads with e-mail and password.
        assert.equal((await ctx.admin('POST', '/admin/v1/users', { email: 'owner@example.com', password: PASSWORD, role: 'owner' })).statusCode, 201);
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        assert.deepEqual(await signInForms(page), ['Account sign-in', 'Token sign-in'], 'an owner exists: e-mail and password first');
        assert.equal(await page.getByText('No account exists yet').count(), 0);
        await page.getByLabel('E-mail address').fill('owner@example.com');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
        await page.close();
      },
    );
  });
}
