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
import { createFlag, createProject, type ProjectFixture } from '../support/fixtures.ts';
import { freePort, ROOT } from '../support/process.ts';

// Issue 33 in the dashboard, in headless Chromium: the flag screen shows an active release as a timeline
// (steps with percentages, the current step and what it waits for, the guardrails with their numbers) with
// its moves behind confirmations; a rolled-back release says why at the top of its flag's page; release
// templates are made and deleted in the project's settings. At 1280 and 390 px, light and dark, without
// sideways scrolling, scanned with axe-core.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-dashboard-releases-'));

async function axeScan(page: Page, screen: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  assert.deepEqual(
    violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`),
    [],
    screen,
  );
}

async function signIn(page: Page, base: string) {
  await page.goto(`${base}/sign-in`);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
}

describe('dashboard release screens in headless Chromium', { skip: chromiumMissing }, () => {
  let ctx: TestContext;
  let base: string;
  let project: ProjectFixture;
  const shots = path.join(ROOT, 'test-output', 'dashboard-releases');
  const releases = (flag: string) => `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/${flag}/releases`;
  const ok = (res: { statusCode: number; body: string }, status = 200) => {
    assert.equal(res.statusCode, status, res.body);
    return JSON.parse(res.body);
  };

  before(async () => {
    await buildDashboard(WEB_DIR);
    const port = freePort();
    base = `http://127.0.0.1:${port}`;
    ctx = await createTestContext('sqlite', { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: WEB_DIR, FLAGPOST_RELEASE_CHECK_MS: '0' });
    await ctx.app.listen({ port, host: '127.0.0.1' });
    fs.mkdirSync(shots, { recursive: true });
    project = await createProject(ctx, 'Released shop');
    ok(
      await ctx.admin('POST', `/admin/v1/projects/${project.key}/metrics`, {
        key: 'error-rate',
        name: 'Error rate',
        event: 'error',
        type: 'proportion',
        direction: 'decrease',
      }),
      201,
    );
    await createFlag(ctx, project.key, { slug: 'checkout' });
    ok(
      await ctx.admin('POST', releases('checkout'), {
        variant: 'on',
        baseline: 'off',
        steps: [{ percent: 10 }, { percent: 50, holdSeconds: 3600, approval: true }, { percent: 100 }],
        guardrails: [{ metric: 'error-rate', minUsers: 300 }],
      }),
      201,
    );
    // The first step has no hold and its guardrail has no user yet: it waits for users.
    await ctx.services.releaseGuard.runOnce();
    await createFlag(ctx, project.key, { slug: 'search' });
    const search = ok(await ctx.admin('POST', releases('search'), { variant: 'on', baseline: 'off', steps: [{ percent: 20 }, { percent: 100 }] }), 201);
    ok(await ctx.admin('POST', `${releases('search')}/${search.id}/rollback`));
  });
  after(async () => {
    await ctx?.close();
  });

  it("shows the active release's timeline and moves it with confirmations; a rolled-back release says why", { timeout: 180_000 }, async () => {
    const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await signIn(page, base);
      await page.goto(`${base}/projects/${project.key}/flags/checkout`);
      const steps = page.getByRole('list', { name: 'Steps' });
      await steps.waitFor();
      assert.equal(await steps.getByRole('listitem').count(), 3);
      const current = steps.locator('li[aria-current="step"]');
      assert.match((await current.textContent()) ?? '', /^10 %.*Waits for its guardrails to see enough users/);
      await page.getByText('Serving on to 10 %').waitFor();
      const guardrail = page.getByRole('table', { name: 'Guardrails' }).getByRole('row', { name: /error-rate/ });
      await guardrail.getByText('collecting').waitFor();
      await guardrail.getByText(/each needs 300/).waitFor();
      assert.equal(await page.getByRole('alert').count(), 0, 'no rolled-back notice on a running release');

      // The guard would move it on once the guardrail decides; here a person rolls it forward step by step:
      // pause, resume, each behind a confirmation.
      await page.getByRole('button', { name: 'Pause…' }).click();
      await page.getByRole('dialog', { name: 'Pause the release?' }).getByRole('button', { name: 'Pause' }).click();
      await page.getByText('Paused: nothing moves, and the hold does not count').waitFor();
      await page.getByRole('button', { name: 'Resume…' }).click();
      await page.getByRole('dialog', { name: 'Resume the release?' }).getByRole('button', { name: 'Resume' }).click();
      await page.getByText('Waits for its guardrails to see enough users').waitFor();

      // Cancelling asks first; backing out changes nothing.
      await page.getByRole('button', { name: 'Cancel release…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Cancel the release?' });
      await dialog.getByText('Everyone is served off at once').waitFor();
      await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
      assert.equal(ok(await ctx.admin('GET', releases('checkout'))).releases[0].status, 'running');

      await page.goto(`${base}/projects/${project.key}/flags/search`);
      const notice = page.getByRole('alert').filter({ hasText: 'was rolled back' });
      await notice.waitFor();
      assert.match(
        (await notice.textContent()) ?? '',
        /The release of on in development was rolled back.*everyone is served off again\. Why: rolled back by admin token\./,
      );
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });

  it('approves a step that waits for an approval', { timeout: 120_000 }, async () => {
    await createFlag(ctx, project.key, { slug: 'banner' });
    ok(await ctx.admin('POST', releases('banner'), { variant: 'on', baseline: 'off', steps: [{ percent: 30, approval: true }, { percent: 100 }] }), 201);
    const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await browser.newPage();
      await signIn(page, base);
      await page.goto(`${base}/projects/${project.key}/flags/banner`);
      await page.getByText('Waits for someone to approve this step').waitFor();
      await page.getByRole('button', { name: 'Approve step…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Approve the next step?' });
      await dialog.getByText('30 % of users will get on.').waitFor();
      await dialog.getByRole('button', { name: 'Approve step' }).click();
      await page.getByText('Serving on to 30 %').waitFor();
      await page.getByText(/approved by admin token/).waitFor();
      assert.equal(ok(await ctx.admin('GET', releases('banner'))).releases[0].status, 'running');
    } finally {
      await browser.close();
    }
  });

  it("makes and deletes a release template in the project's settings", { timeout: 120_000 }, async () => {
    const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await browser.newPage();
      await signIn(page, base);
      await page.goto(`${base}/projects/${project.key}/environments`);
      const form = page.getByRole('form', { name: 'New release template' });
      await form.getByLabel('Template name').fill('Careful');
      await form.getByLabel('Template key').fill('careful');
      await form.getByLabel('Metric guardrails').fill('error-rate 500');
      await form.getByRole('button', { name: 'Create template' }).click();
      const row = page.getByRole('table', { name: 'Release templates' }).getByRole('row', { name: /Careful/ });
      await row.getByText('5 % for 1 h, then 25 % for 2 h after approval, then 100 %').waitFor();
      await row.getByText('error-rate').waitFor();
      const stored = ok(await ctx.admin('GET', `/admin/v1/projects/${project.key}/release-templates/careful`));
      assert.deepEqual(stored.steps, [{ percent: 5, holdSeconds: 3600 }, { percent: 25, holdSeconds: 7200, approval: true }, { percent: 100 }]);
      assert.deepEqual(stored.guardrails, [{ metric: 'error-rate', minUsers: 500 }]);
      await row.getByRole('button', { name: 'Delete template Careful' }).click();
      await page.getByRole('dialog', { name: 'Delete release template Careful?' }).getByRole('button', { name: 'Delete template' }).click();
      await page.getByText('No release template yet').waitFor();
    } finally {
      await browser.close();
    }
  });

  it('shows a change request that starts a release as the plan reviewers approve', { timeout: 120_000 }, async () => {
    const prod = project.environments[2]!.key;
    ok(await ctx.admin('PATCH', `/admin/v1/projects/${project.key}/environments/${prod}`, { protected: true }));
    const request = ok(
      await ctx.admin('POST', `/admin/v1/projects/${project.key}/change-requests`, {
        environment: prod,
        title: 'Release the new checkout',
        releases: [{ slug: 'checkout', plan: { variant: 'on', baseline: 'off', steps: [{ percent: 5, holdSeconds: 3600 }, { percent: 100 }] } }],
        submit: true,
      }),
      201,
    );
    const browser = await launchChromium({ viewport: { width: 390, height: 860 } });
    try {
      const page = await browser.newPage();
      await signIn(page, base);
      await page.goto(`${base}/projects/${project.key}/changes/${request.id}`);
      await page.getByRole('heading', { name: 'Release of flag checkout' }).waitFor();
      await page.getByText('5 % for at least 1 h').waitFor();
      await page.getByText('Guardrails: none').waitFor();
      const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(sideways <= 0, `the change request scrolls sideways by ${sideways} px`);
      await axeScan(page, 'change request with a release');
    } finally {
      await browser.close();
    }
  });

  it('starts a release from the flag screen, and proposes one in a protected environment as a change request', { timeout: 120_000 }, async () => {
    await createFlag(ctx, project.key, { slug: 'starter' });
    const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await browser.newPage();
      await signIn(page, base);
      await page.goto(`${base}/projects/${project.key}/flags/starter`);
      const development = page.locator('.release-environment', { has: page.getByRole('heading', { name: 'development', level: 3 }) });
      await development.getByRole('button', { name: 'Start a release…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Start a release of starter in development' });
      await dialog.getByLabel('Steps').fill('50 60\n100');
      await dialog.getByLabel('Metric guardrails').fill('error-rate 200');
      await dialog.getByRole('button', { name: 'Start release' }).click();
      await development.getByText('Serving on to 50 %').waitFor();
      const [started] = ok(await ctx.admin('GET', releases('starter'))).releases;
      assert.deepEqual(
        started.steps.map((s: { percent: number; holdSeconds?: number }) => [s.percent, s.holdSeconds ?? 0]),
        [
          [50, 60],
          [100, 0],
        ],
      );
      assert.deepEqual(started.guardrails[0].metric, 'error-rate');

      const production = page.locator('.release-environment', { has: page.getByRole('heading', { name: 'production', level: 3 }) });
      await production.getByRole('button', { name: 'Propose a release…' }).click();
      const propose = page.getByRole('dialog', { name: 'Propose a release of starter in production' });
      await propose.getByLabel('Steps').fill('10 600\n100');
      await propose.getByRole('button', { name: 'Propose release' }).click();
      await page.getByText('Proposed in a change request: production is protected').waitFor();
      const open = ok(await ctx.admin('GET', `/admin/v1/projects/${project.key}/change-requests`)).changeRequests;
      const proposed = open.find((r: { title: string }) => r.title === 'Release on of starter in production');
      assert.ok(proposed, JSON.stringify(open));
      assert.deepEqual(proposed.changes, [{ kind: 'release', key: 'starter' }]);
      assert.equal(proposed.status, 'in_review');
    } finally {
      await browser.close();
    }
  });

  for (const theme of ['light', 'dark'] as const) {
    for (const width of [1280, 390] as const) {
      it(`shows the release screens at ${width} px in the ${theme} theme`, { timeout: 120_000 }, async () => {
        const browser = await launchChromium({ viewport: { width, height: 860 }, colorScheme: theme });
        try {
          const page = await browser.newPage();
          await signIn(page, base);
          for (const [name, url, wait] of [
            ['release', `/projects/${project.key}/flags/checkout`, 'Steps'],
            ['rolled-back', `/projects/${project.key}/flags/search`, 'Past releases in development'],
          ] as const) {
            await page.goto(`${base}${url}`);
            await page.getByRole(name === 'release' ? 'list' : 'table', { name: wait }).waitFor();
            await page.waitForFunction(() => !document.querySelector('.loading'));
            const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
            assert.ok(sideways <= 0, `${name} scrolls sideways by ${sideways} px at ${width} px`);
            const background = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
            assert.equal(background === 'rgb(15, 20, 25)', theme === 'dark', `${name} background ${background} in ${theme}`);
            await page.screenshot({ path: path.join(shots, `${name}-${theme}-${width}.png`), fullPage: true });
            await page
              .locator('section:has(> h2#releases), section:has(h2#releases)')
              .first()
              .screenshot({ path: path.join(shots, `${name}-section-${theme}-${width}.png`) });
            await axeScan(page, `${name} (${theme}, ${width} px)`);
          }
        } finally {
          await browser.close();
        }
      });
    }
  }
});
