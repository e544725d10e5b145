import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { buildDashboard } from '../../dashboard/build.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { ADMIN_TOKEN, createTestContext, dialects, type TestContext } from '../support/context.ts';
import { freePort } from '../support/process.ts';

// Issue 20, roles per project: an owner gives a member a role on one project from the members screen,
// and that member then sees that project only. Headless Chromium, both engines.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-project-roles-'));
const PASSWORD = 'a long test password 0123';

for (const dialect of dialects()) {
  describe(`roles per project on the members screen [${dialect}]`, { skip: chromiumMissing }, () => {
    let ctx: TestContext;
    let base: string;
    let browser: BrowserContext;

    before(async () => {
      if (!fs.existsSync(path.join(WEB_DIR, 'index.html'))) await buildDashboard(WEB_DIR);
      const port = freePort();
      base = `http://127.0.0.1:${port}`;
      ctx = await createTestContext(dialect, { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: WEB_DIR });
      await ctx.app.listen({ port, host: '127.0.0.1' });
      browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    });
    after(async () => {
      await browser?.close();
      await ctx?.close();
    });

    it('gives a member a role on one project, who then sees that project only', { timeout: 120_000 }, async () => {
      await ctx.admin('POST', '/admin/v1/users', { email: 'owner@example.com', password: PASSWORD, role: 'owner' });
      const contractor = (await ctx.admin('POST', '/admin/v1/users', { email: 'contractor@example.com', password: PASSWORD, role: 'none' })).json();
      await ctx.admin('POST', '/admin/v1/projects', { name: 'Web shop' });
      await ctx.admin('POST', '/admin/v1/projects', { name: 'Internal tools' });

      const page = await browser.newPage();
      await page.goto(`${base}/sign-in`);
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      await page.goto(`${base}/members`);
      const form = page.getByRole('form', { name: 'Give a project role' });
      await form.getByLabel('Member').selectOption({ label: 'contractor@example.com' });
      await form.getByLabel('Project', { exact: true }).selectOption({ label: 'Web shop' });
      await form.getByLabel('Project role').selectOption('editor');
      await form.getByRole('button', { name: 'Give project role' }).click();
      await page
        .getByRole('table', { name: 'Roles on single projects' })
        .getByRole('row', { name: /contractor@example\.com Web shop editor/ })
        .waitFor();
      const roles = (await ctx.admin('GET', `/admin/v1/users/${contractor.id}/project-roles`)).json();
      assert.deepEqual(
        roles.projectRoles.map((r: { projectName: string; role: string }) => [r.projectName, r.role]),
        [['Web shop', 'editor']],
      );
      await page.close();
      await browser.clearCookies();

      const member = await browser.newPage();
      await member.goto(`${base}/sign-in`);
      await member.getByLabel('E-mail address').fill('contractor@example.com');
      await member.getByLabel('Password').fill(PASSWORD);
      await member.getByRole('button', { name: 'Sign in', exact: true }).click();
      await member.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      await member.getByRole('link', { name: 'Web shop' }).waitFor();
      assert.equal(await member.getByText('Internal tools').count(), 0, 'the other project is not even named');
      await member.close();
    });
  });
}
