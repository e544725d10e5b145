import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { buildDashboard } from '../../dashboard/build.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { ADMIN_TOKEN, createTestContext, type TestContext } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';
import { freePort, ROOT } from '../support/process.ts';

// Issue 32 in the dashboard, in headless Chromium: a metric and an experiment made on the Experiments
// screen from a flag's split, started with a confirmation; after 4,000 users' events the results screen
// says in words which variant won, with the lift drawn around zero; both screens at 1280 and 390 px in the
// light and the dark theme, without sideways scrolling, scanned with axe-core.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-dashboard-experiments-'));

async function axeScan(page: Page, screen: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  assert.deepEqual(
    violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`),
    [],
    screen,
  );
}

describe('dashboard experiments screens in headless Chromium', { skip: chromiumMissing }, () => {
  let ctx: TestContext;
  let base: string;
  let project: ProjectFixture;
  const shots = path.join(ROOT, 'test-output', 'dashboard-experiments');

  before(async () => {
    await buildDashboard(WEB_DIR);
    const port = freePort();
    base = `http://127.0.0.1:${port}`;
    ctx = await createTestContext('sqlite', { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: WEB_DIR });
    await ctx.app.listen({ port, host: '127.0.0.1' });
    fs.mkdirSync(shots, { recursive: true });
    project = await createProject(ctx, 'Measured shop');
    await createFlag(ctx, project.key, { slug: 'checkout', enabled: false });
    const split = await ctx.admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/checkout`, {
      rules: [
        {
          id: 'half',
          name: 'Half and half',
          enabled: true,
          conditions: [],
          segments: [],
          serve: {
            split: {
              bucketing: 'flagd-fractional-v2',
              weights: [
                { variant: 'off', weight: 50 },
                { variant: 'on', weight: 50 },
              ],
            },
          },
        },
      ],
    });
    assert.equal(split.statusCode, 200, split.body);
  });
  after(async () => {
    await ctx?.close();
  });

  /** 4,000 users, half in each variant; `on` converts at 14 %, `off` at 10 %. */
  async function sendEvents() {
    const events: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 4000; i++) {
      const variant = i % 2 === 0 ? 'on' : 'off';
      const targetingKey = `user-${i}`;
      events.push({ kind: 'exposure', flagKey: 'checkout', variant, targetingKey });
      if (i % 100 < (variant === 'on' ? 28 : 20)) events.push({ kind: 'track', name: 'purchase', targetingKey, value: 30 });
    }
    for (let from = 0; from < events.length; from += 1000) {
      const res = await ctx.app.inject({ method: 'POST', url: '/v1/track', headers: keys(project), payload: { events: events.slice(from, from + 1000) } });
      assert.equal(res.statusCode, 202, res.body);
    }
  }

  it('creates a metric and an experiment from the split, starts it, and reads who won', { timeout: 180_000 }, async () => {
    const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${base}/sign-in`);
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();

      await page.goto(`${base}/projects/${project.key}`);
      await page.getByRole('link', { name: 'Experiments' }).click();
      await page.getByText('No experiment in this environment').waitFor();
      await page.getByText('No metric yet').waitFor();

      const metricForm = page.locator('form', { has: page.getByRole('heading', { name: 'New metric' }) });
      await metricForm.getByLabel('Name').fill('purchase rate');
      await metricForm.getByLabel('Key').fill('purchase-rate');
      await metricForm.getByLabel('Tracked event').fill('purchase');
      await metricForm.getByRole('button', { name: 'Create metric' }).click();
      await page.getByRole('row', { name: /purchase rate.*purchase.*proportion/ }).waitFor();

      await page.getByLabel('Name').first().fill('New checkout');
      await page.getByLabel('Key').first().fill('new-checkout');
      await page.getByLabel('Flag', { exact: true }).selectOption('checkout');
      await page.getByLabel('Control variant').selectOption('off');
      await page.getByLabel('purchase rate (proportion, increase)').check();
      await page.getByRole('button', { name: 'Create experiment' }).click();
      await page.getByRole('heading', { name: /New checkout/, level: 1 }).waitFor();
      await page.getByText('No user counted yet').waitFor();

      await page.goto(`${base}/projects/${project.key}/experiments`);
      const row = page.getByRole('row', { name: /New checkout/ });
      await row.getByRole('button', { name: 'Start' }).click();
      await page.getByRole('button', { name: 'Start experiment' }).click();
      await row.getByText('running').waitFor();

      await sendEvents();
      await row.getByRole('link', { name: 'New checkout' }).click();
      await page.getByText(/Off: 2,000 · On: 2,000|On: 2,000 · Off: 2,000/).waitFor();
      const verdict = (await page.locator('p.verdict').textContent()) ?? '';
      assert.match(verdict, /^On raises purchase rate by \d+\.\d % \(\d+\.\d % to \d+\.\d %\); \d+ % chance to beat off\.$/, verdict);
      assert.equal(await page.locator('p.verdict.good').count(), 1);
      assert.equal(await page.getByRole('alert').count(), 0, 'no sample-ratio warning for an even split');
      const bar = page.getByRole('img', { name: /^\+\d+\.\d %, from \d+\.\d % to \d+\.\d %$/ });
      assert.equal(await bar.count(), 1);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });

  for (const theme of ['light', 'dark'] as const) {
    for (const width of [1280, 390] as const) {
      it(`shows the experiments and results screens at ${width} px in the ${theme} theme`, { timeout: 120_000 }, async () => {
        const browser = await launchChromium({ viewport: { width, height: 860 }, colorScheme: theme });
        try {
          const page = await browser.newPage();
          await page.goto(`${base}/sign-in`);
          await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
          await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
          await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
          for (const [name, url, heading] of [
            ['experiments', `/projects/${project.key}/experiments`, 'Measured shop'],
            ['results', `/projects/${project.key}/experiments/${project.environments[0]!.key}/new-checkout`, /New checkout/],
          ] as const) {
            await page.goto(`${base}${url}`);
            await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
            await page.waitForFunction(() => !document.querySelector('.loading'));
            const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
            assert.ok(sideways <= 0, `${name} scrolls sideways by ${sideways} px at ${width} px`);
            const background = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
            assert.equal(background === 'rgb(15, 20, 25)', theme === 'dark', `${name} background ${background} in ${theme}`);
            await page.screenshot({ path: path.join(shots, `${name}-${theme}-${width}.png`), fullPage: true });
            await axeScan(page, `${name} (${theme}, ${width} px)`);
          }
        } finally {
          await browser.close();
        }
      });
    }
  }
});
