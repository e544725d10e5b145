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
import { createFlag, createProject, keys } from '../support/fixtures.ts';
import { freePort, ROOT } from '../support/process.ts';

// Issue 23 in the dashboard: a flag's evaluations per day and environment as a chart with "last
// evaluated", and the project's flags sorted by use, in headless Chromium, scanned with axe-core.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-dashboard-usage-'));

describe('dashboard usage screens in headless Chromium', { skip: chromiumMissing }, () => {
  let ctx: TestContext;
  let base: string;
  let browser: BrowserContext;
  const shots = path.join(ROOT, 'test-output', 'dashboard-usage');

  before(async () => {
    await buildDashboard(WEB_DIR);
    const port = freePort();
    base = `http://127.0.0.1:${port}`;
    ctx = await createTestContext('sqlite', { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: WEB_DIR, FLAGPOST_USAGE_FLUSH_MS: '0' });
    await ctx.app.listen({ port, host: '127.0.0.1' });
    fs.mkdirSync(shots, { recursive: true });
    browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    await ctx?.close();
  });

  it("shows the flags by use and a flag's chart with its last evaluation", { timeout: 120_000 }, async () => {
    const project = await createProject(ctx, 'Usage shop');
    await createFlag(ctx, project.key, { slug: 'busy-flag', enabled: true });
    await createFlag(ctx, project.key, { slug: 'idle-flag' });
    for (let i = 0; i < 5; i++) await fetch(`${base}/v1/flags/busy-flag`, { headers: keys(project) });
    await ctx.services.usage.flush();

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${base}/sign-in`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();

    await page.goto(`${base}/projects/${project.key}/usage`);
    const table = page.getByRole('table', { name: /Flags by evaluations/ });
    await table.waitFor();
    const rows = table.getByRole('row');
    assert.match((await rows.nth(1).textContent()) ?? '', /busy-flag.*5/);
    assert.match((await rows.nth(2).textContent()) ?? '', /idle-flag.*0.*Never/);
    const scan = async (name: string) => {
      await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
      const { violations } = await new AxeBuilder({ page }).analyze();
      assert.deepEqual(
        violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`),
        [],
        name,
      );
    };
    await scan('project-usage');

    await rows.nth(1).getByRole('link', { name: 'busy-flag' }).click();
    const chart = page.getByRole('img', { name: /Evaluations per day of busy-flag over 30 days/ });
    await chart.waitFor();
    assert.match((await chart.getAttribute('aria-label')) ?? '', new RegExp(`${project.environments[0]!.name} 5`));
    await page.getByText(/5 evaluations, last evaluated/).waitFor();
    await page.getByRole('button', { name: '7 days' }).click();
    await page.getByRole('img', { name: /over 7 days/ }).waitFor();
    await scan('flag-usage');
    assert.deepEqual(errors, []);
  });
});
