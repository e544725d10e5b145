import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { buildDashboard } from '../../dashboard/build.ts';
import { ADMIN_TOKEN, createTestContext, dialects, type TestContext } from '../support/context.ts';
import { multipart } from '../support/forms.ts';
import { freePort, ROOT } from '../support/process.ts';

// Issue 9: the dashboard in headless Chromium, on both engines. One walk through every screen: sign in,
// a project, a flag switched on and read through the flag interface, its payload and preview content,
// an API key created and revoked, a form, a submission with its file in the inbox, the CSV export, sign
// out. Every screen is scanned with axe-core (no serious or critical violation) and photographed under
// test-output/dashboard/<engine>/.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-dashboard-'));

async function axeScan(page: Page, screen: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `axe on ${screen}`,
  );
}

describe('dashboard build', () => {
  before(async () => {
    await buildDashboard(WEB_DIR);
  });

  it('keeps the first load under 150 KB gzip-compressed and TipTap out of it', async () => {
    const { gzipSync } = await import('node:zlib');
    const html = fs.readFileSync(path.join(WEB_DIR, 'index.html'), 'utf8');
    const refs = [...html.matchAll(/(?:src|href)="\/assets\/([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(refs.some((r) => r.endsWith('.js')) && refs.some((r) => r.endsWith('.css')), html);
    // What the entry imports statically loads at once too.
    const firstLoad = new Set(refs);
    for (const ref of refs.filter((r) => r.endsWith('.js'))) {
      const code = fs.readFileSync(path.join(WEB_DIR, 'assets', ref), 'utf8');
      for (const m of code.matchAll(/(?:^|[;}\s])import\s*(?:[\w{}*,\s$]+from\s*)?["']\.\/([^"']+\.js)["']/g)) firstLoad.add(m[1]!);
    }
    let total = gzipSync(html).length;
    for (const file of firstLoad) {
      const bytes = fs.readFileSync(path.join(WEB_DIR, 'assets', file));
      total += gzipSync(bytes).length;
      if (file.endsWith('.js')) assert.doesNotMatch(bytes.toString('utf8'), /ProseMirror|tiptap/i, `${file} is loaded first and holds the editor`);
    }
    assert.ok(total <= 150 * 1024, `first load ${total} bytes gzip`);
    const all = fs.readdirSync(path.join(WEB_DIR, 'assets')).filter((f) => f.endsWith('.js') && !firstLoad.has(f));
    assert.ok(
      all.some((f) => /ProseMirror/.test(fs.readFileSync(path.join(WEB_DIR, 'assets', f), 'utf8'))),
      'the editor is in a lazy chunk',
    );
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    assert.doesNotMatch(html, /<style|style=/, 'no inline style');
  });
});

for (const dialect of dialects()) {
  describe(`dashboard end to end in headless Chromium [${dialect}]`, { skip: chromiumMissing }, () => {
    let ctx: TestContext;
    let base: string;
    let browser: BrowserContext;
    const shots = path.join(ROOT, 'test-output', 'dashboard', dialect);

    before(async () => {
      if (!fs.existsSync(path.join(WEB_DIR, 'index.html'))) await buildDashboard(WEB_DIR);
      const port = freePort();
      base = `http://127.0.0.1:${port}`;
      ctx = await createTestContext(dialect, { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: WEB_DIR });
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
    const flagRead = async (projectKey: string, envKey: string, slug: string) =>
      (await fetch(`${base}/v1/flags/${slug}`, { headers: { 'x-project-key': projectKey, 'x-environment-key': envKey } })).json() as Promise<{
        enabled: boolean;
        payload: unknown;
      }>;

    it('manages flags and forms through every screen', { timeout: 240_000 }, async () => {
      const page = await browser.newPage();
      const browserErrors: string[] = [];
      page.on('pageerror', (e) => browserErrors.push(String(e)));
      page.on('console', (m) => {
        if (m.type() === 'error' && !/status of 40[14]/.test(m.text())) browserErrors.push(m.text());
      });

      // Sign in. A signed-out visitor lands on the sign-in page.
      await page.goto(`${base}/projects`);
      await page.getByLabel('Admin token').waitFor();
      await screen(page, '01-sign-in');
      await page.getByLabel('Admin token').fill('wrong-token-0123456789');
      await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
      await page.getByRole('alert').filter({ hasText: 'Missing or invalid admin token' }).waitFor();
      // By keyboard alone: the field, then Enter.
      await page.getByLabel('Admin token').fill('');
      await page.getByLabel('Admin token').focus();
      await page.keyboard.type(ADMIN_TOKEN);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      const stored = await page.evaluate(() => JSON.stringify([{ ...localStorage }, { ...sessionStorage }, document.cookie]));
      assert.ok(!stored.includes(ADMIN_TOKEN), 'the token is kept nowhere in the page');
      assert.doesNotMatch(stored, /fps_/, 'the session cookie is HttpOnly');

      // A project.
      await page.getByLabel('Project name').fill('Web shop');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('heading', { name: 'Web shop', level: 1 }).waitFor();
      const project = (await ctx.admin('GET', '/admin/v1/projects')).json().projects[0] as { key: string; environments: Array<{ key: string; name: string }> };
      const production = project.environments.find((e) => e.name === 'production')!;
      await page.goto(`${base}/projects`);
      await page.getByRole('link', { name: 'Web shop' }).waitFor();
      await screen(page, '02-projects');
      await page.getByRole('link', { name: 'Web shop' }).click();

      // A flag, switched on in production and read through the flag interface with production's keys.
      await page.getByLabel('Slug').fill('checkout');
      await page.getByLabel('Description').fill('New checkout flow');
      await page.getByRole('button', { name: 'Create flag' }).click();
      const toggle = page.getByRole('switch', { name: 'checkout in production' });
      await toggle.waitFor();
      assert.equal(await toggle.getAttribute('aria-checked'), 'false');
      assert.equal((await flagRead(project.key, production.key, 'checkout')).enabled, false);
      // By keyboard: Tab reaches the switch, Space turns it on.
      await page.getByRole('switch', { name: 'checkout in staging' }).focus();
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'checkout in production');
      await page.keyboard.press('Space');
      await page.waitForFunction(() => document.querySelector('[aria-label="checkout in production"]')?.getAttribute('aria-checked') === 'true');
      // The switch moves at once (optimistic); the save lands a moment later.
      let enabled = false;
      for (let i = 0; i < 100 && !enabled; i++) {
        enabled = (await flagRead(project.key, production.key, 'checkout')).enabled;
        if (!enabled) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(enabled, true, 'saved on the server');
      const development = project.environments.find((e) => e.name === 'development')!;
      assert.equal((await flagRead(project.key, development.key, 'checkout')).enabled, false, 'only production changed');
      await page.getByLabel('Search flags').fill('nothing-matches');
      // The list filters as the search settles (it is debounced): wait for the row to go, then count.
      await page.getByRole('switch', { name: 'checkout in production' }).waitFor({ state: 'detached' });
      assert.equal(await page.getByRole('switch', { name: 'checkout in production' }).count(), 0);
      await page.getByLabel('Search flags').fill('checkout flow');
      await toggle.waitFor();
      await screen(page, '03-flags');

      // The flag's screen: payload (invalid JSON refused before sending), then valid JSON.
      await page.getByRole('link', { name: 'checkout', exact: true }).click();
      await page.getByRole('heading', { name: 'checkout', level: 1 }).waitFor();
      await page.getByLabel('Payload in production').fill('{"variant": ');
      await page.getByRole('button', { name: 'Save production' }).click();
      await page.getByRole('alert').filter({ hasText: 'Payload is not valid JSON' }).waitFor();
      assert.equal((await flagRead(project.key, production.key, 'checkout')).payload, null);
      await page.getByLabel('Payload in production').fill('{"variant": "b"}');
      // Once the save is answered, the very next read shows it: no polling, the server reads its writes.
      const saved = page.waitForResponse(
        (r) =>
          r.request().method() === 'PATCH' && new URL(r.url()).pathname === `/admin/v1/projects/${project.key}/environments/${production.key}/flags/checkout`,
      );
      await page.getByRole('button', { name: 'Save production' }).click();
      assert.equal((await saved).status(), 200);
      assert.deepEqual((await flagRead(project.key, production.key, 'checkout')).payload, { variant: 'b' });

      // Preview content written in the editor and rendered by GET /v1/flags/preview.
      await page.getByLabel('Preview flag').first().check();
      await page.getByLabel('Preview name').first().fill('New checkout');
      const editor = page.getByLabel('Preview content').first();
      await editor.click();
      await page.keyboard.type('Try the new checkout');
      await page.getByRole('button', { name: 'Save preview' }).first().click();
      const previewHeaders = { 'x-project-key': project.key, 'x-environment-key': development.key };
      let preview: Array<{ slug: string; name?: string; content?: string }> = [];
      for (let i = 0; i < 50 && preview.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        preview = ((await (await fetch(`${base}/v1/flags/preview`, { headers: previewHeaders })).json()) as { flags?: typeof preview }).flags ?? [];
      }
      assert.equal(preview.length, 1, 'the preview flag is listed');
      assert.match(JSON.stringify(preview[0]), /Try the new checkout/);
      await screen(page, '04-flag');

      // Environments and keys: an API key created (token shown once) and revoked.
      await page.goto(`${base}/projects/${project.key}/environments`);
      await page.getByLabel('API key name').fill('CI');
      await page.getByRole('button', { name: 'Create API key' }).click();
      const token = await page.getByLabel('New API key').inputValue();
      assert.match(token, /^fpk_/);
      // Local evaluation: an environment's flagd sync token created (selector shown once), then rotated.
      await page.getByRole('button', { name: `Create token for ${production.name}` }).click();
      const selector = await page.getByLabel(`Selector for ${production.name}`).inputValue();
      assert.match(selector, /^flagpost:fps_/);
      const syncToken = await ctx.admin('GET', `/admin/v1/projects/${project.key}/environments/${production.key}/flagd-sync-token`);
      assert.equal(syncToken.json().prefix, selector.slice('flagpost:'.length, 'flagpost:'.length + 8));
      await page.getByRole('button', { name: `Rotate token of ${production.name}` }).click();
      const selectorField = page.getByLabel(`Selector for ${production.name}`);
      for (let i = 0; i < 100 && (await selectorField.inputValue()) === selector; i++) await new Promise((r) => setTimeout(r, 50));
      assert.notEqual(await selectorField.inputValue(), selector, 'rotation shows a new selector');
      const codeRefs = (key: string) =>
        fetch(`${base}/v1/flags/code-refs`, {
          method: 'POST',
          headers: { 'x-project-key': project.key, 'x-environment-key': production.key, 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ branch: 'main', projectName: 'web', references: {} }),
        });
      assert.equal((await codeRefs(token)).status, 201);
      // Whole-branch uploads, as the scanner sends them: `legacy` leaves the code (issue 11's hygiene).
      assert.equal((await ctx.admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'legacy' })).statusCode, 201);
      const wholeBranch = (references: Record<string, unknown>) =>
        fetch(`${base}/v1/flags/code-refs`, {
          method: 'POST',
          headers: {
            'x-project-key': project.key,
            'x-environment-key': production.key,
            'x-api-key': token,
            'x-flagpost-scope': 'branch',
            'content-type': 'application/json',
          },
          body: JSON.stringify({ branch: 'main', projectName: 'web', references }),
        });
      const line = (slug: string) => [{ filePath: 'src/app.ts', lineNumber: 3, lineContent: `useFlag("${slug}")` }];
      assert.equal((await wholeBranch({ checkout: line('checkout'), legacy: line('legacy') })).status, 201);
      assert.equal((await wholeBranch({ checkout: line('checkout') })).status, 201);
      await screen(page, '05-environments');
      await page.getByRole('button', { name: 'Revoke CI' }).click();
      // Revoking asks first (issue 22).
      await page.getByRole('dialog', { name: 'Revoke API key CI?' }).getByRole('button', { name: 'Revoke API key' }).click();
      for (let i = 0; i < 50 && (await codeRefs(token)).status !== 401; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal((await codeRefs(token)).status, 401, 'the revoked key is refused');

      // The project's stale flags: `legacy` is referenced nowhere since the last upload; its screen says so.
      await page.getByRole('link', { name: 'Stale flags' }).click();
      const legacyRow = page.getByRole('row').filter({ hasText: 'legacy' });
      await legacyRow.getByText('Not referenced in any branch').waitFor();
      await legacyRow.getByText(/Removed from code on/).waitFor();
      assert.equal(await page.getByRole('row').filter({ hasText: 'checkout' }).count(), 0, 'checkout is in use');
      await screen(page, '05b-stale-flags');
      await legacyRow.getByRole('link', { name: 'legacy' }).click();
      await page.getByRole('heading', { name: 'legacy', level: 1 }).waitFor();
      await page.getByText(/Removed from code on .*: it can probably be deleted/).waitFor();
      await page.getByText(/web · main: 1 reference gone on/).waitFor();

      // A form, a submission with a file, the inbox, the detail, the CSV export.
      await page.getByRole('link', { name: 'Forms' }).click();
      await page.getByLabel('Form name').fill('Contact');
      await page.getByRole('button', { name: 'Create form' }).click();
      await page.getByLabel('Uploads enabled').check();
      await page.getByRole('button', { name: 'Save settings' }).click();
      const form = (await ctx.admin('GET', '/admin/v1/forms')).json().forms[0] as { key: string };
      for (let i = 0; i < 50 && !(await ctx.admin('GET', `/admin/v1/forms/${form.key}`)).json().uploadsEnabled; i++)
        await new Promise((r) => setTimeout(r, 100));
      await screen(page, '06-form');
      const body = multipart([
        { name: 'email', value: 'ada@example.com' },
        { name: 'message', value: 'Hello from the e2e test' },
        { name: 'attachment', filename: 'notes.txt', content: 'analytical engine', contentType: 'text/plain' },
      ]);
      const submitted = await fetch(`${base}/v1/s/${form.key}?mode=rest`, {
        method: 'POST',
        headers: { 'content-type': body.contentType },
        body: body.payload,
      });
      assert.equal(submitted.status, 200);
      await page.goto(`${base}/forms`);
      await page.getByRole('link', { name: 'Contact' }).first().waitFor();
      await screen(page, '07-forms');
      await page.goto(`${base}/forms/${form.key}/submissions`);
      await page.getByText('ada@example.com').first().waitFor();
      await screen(page, '08-inbox');
      const csvHref = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
      const csv = await page.context().request.get(new URL(csvHref!, base).toString());
      assert.equal(csv.status(), 200);
      assert.match(await csv.text(), /ada@example\.com/);
      await page
        .getByText('ada@example.com')
        .first()
        .click()
        .catch(() => {});
      const detailLink = page.locator(`a[href^="/forms/${form.key}/submissions/"]`).first();
      if (await detailLink.count()) await detailLink.click();
      await page.getByRole('heading', { name: 'Submission', level: 1 }).waitFor();
      const file = page.getByRole('link', { name: 'notes.txt' });
      const download = await page.context().request.get(new URL((await file.getAttribute('href'))!, base).toString());
      assert.equal(await download.text(), 'analytical engine');
      await page.getByRole('button', { name: 'Mark as spam' }).click();
      await page.getByRole('button', { name: 'Mark as not spam' }).waitFor();
      await screen(page, '09-submission');

      // Sign out: the dashboard and the API refuse the old session.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Admin token').waitFor();
      const after = await page.context().request.get(`${base}/admin/v1/projects`);
      assert.equal(after.status(), 401);
      await page.goto(`${base}/forms`);
      await page.getByLabel('Admin token').waitFor();
      assert.deepEqual(browserErrors, []);
    });

    it('lets an owner invite an editor and a viewer; the viewer cannot toggle, the editor can, the history says who', { timeout: 240_000 }, async (t) => {
      const password = 'owner password 0123456789';
      const project = (await ctx.admin('POST', '/admin/v1/projects', { name: 'Team shop' })).json() as {
        key: string;
        environments: Array<{ key: string; name: string }>;
      };
      assert.equal((await ctx.admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'beta', description: 'Beta banner' })).statusCode, 201);
      const production = project.environments.find((e) => e.name === 'production')!;
      const browserErrors: string[] = [];
      const people: BrowserContext[] = [];
      t.after(() => Promise.all(people.map((p) => p.close())));
      const pageOf = async () => {
        // One browser (one cookie jar) per person.
        const context = await launchChromium({ viewport: { width: 1280, height: 900 } });
        people.push(context);
        const page = await context.newPage();
        page.on('pageerror', (e) => browserErrors.push(String(e)));
        page.on('console', (m) => {
          if (m.type() === 'error' && !/status of 40[134]/.test(m.text())) browserErrors.push(m.text());
        });
        return page;
      };

      // The first owner is made in the dashboard with the admin token, then signs in with e-mail and
      // password and invites two members.
      const owner = await pageOf();
      await owner.goto(`${base}/sign-in`);
      await owner.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await owner.getByRole('button', { name: 'Sign in with the admin token' }).click();
      await owner.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      await owner.getByRole('link', { name: 'Members' }).click();
      await owner.getByLabel('Owner e-mail address').fill('owner@example.com');
      await owner.getByLabel('Owner password').fill(password);
      await owner.getByRole('button', { name: 'Create owner' }).click();
      await owner.getByText('Owner owner@example.com created.').waitFor();
      await owner.getByRole('button', { name: 'Sign out' }).click();
      // The members screen (with its own e-mail fields) may still be up for a moment: wait for the sign-in page.
      await owner.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
      const signIn = owner.getByRole('form', { name: 'Account sign-in' });
      await signIn.getByLabel('E-mail address', { exact: true }).fill('owner@example.com');
      await signIn.getByLabel('Password', { exact: true }).fill(password);
      await owner.getByRole('button', { name: 'Sign in', exact: true }).click();
      await owner.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      await owner.getByRole('link', { name: 'Members' }).click();
      const invite = async (email: string, role: string) => {
        await owner.getByLabel('E-mail address', { exact: true }).fill(email);
        await owner.getByLabel('Role', { exact: true }).selectOption(role);
        await owner.getByRole('button', { name: 'Invite', exact: true }).click();
        await owner.getByText(`Send this link to ${email}`).waitFor();
        return owner.getByLabel('Invitation link').inputValue();
      };
      const editorLink = await invite('editor@example.com', 'editor');
      const viewerLink = await invite('viewer@example.com', 'viewer');
      assert.match(editorLink, /\/accept-invitation#token=fpi_/);
      await owner.getByText('viewer@example.com as viewer').waitFor();
      await screen(owner, '10-members');

      const join = async (link: string) => {
        const page = await pageOf();
        await page.goto(link);
        await page.getByRole('heading', { name: 'Join Flagpost' }).waitFor();
        await page.getByLabel('New password').fill('member password 0123');
        await page.getByLabel('Repeat the password').fill('member password 0123');
        await page.getByRole('button', { name: 'Accept the invitation' }).click();
        await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
        assert.equal(new URL(page.url()).hash, '', 'the token left the address bar');
        await page.getByRole('link', { name: 'Team shop' }).click();
        await page.getByRole('switch', { name: 'beta in production' }).waitFor();
        return page;
      };

      // The viewer sees the flags, but the switches are off limits (and the API refuses a write).
      const viewer = await join(viewerLink);
      assert.equal(await viewer.getByRole('switch', { name: 'beta in production' }).isDisabled(), true);
      await viewer.getByText('You are a viewer').waitFor();
      assert.equal(await viewer.getByRole('button', { name: 'Create flag' }).count(), 0);
      const refused = await viewer.evaluate(
        async ([p, e]) =>
          (
            await fetch(`/admin/v1/projects/${p}/environments/${e}/flags/beta`, {
              method: 'PATCH',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ enabled: true }),
            })
          ).status,
        [project.key, production.key],
      );
      assert.equal(refused, 403);
      await screen(viewer, '11-viewer-flags');

      // The editor toggles the flag on in production.
      const editor = await join(editorLink);
      await editor.getByRole('switch', { name: 'beta in production' }).click();
      await editor.waitForFunction(() => document.querySelector('[aria-label="beta in production"]')?.getAttribute('aria-checked') === 'true');
      assert.equal((await flagRead(project.key, production.key, 'beta')).enabled, true);

      // The owner sees who did it, in the flag's history.
      await owner.goto(`${base}/projects/${project.key}/flags/beta`);
      const history = owner.getByRole('table', { name: 'History of beta' });
      const row = history.getByRole('row').filter({ hasText: 'editor@example.com' });
      await row.waitFor();
      assert.match(await row.innerText(), /Flag beta changed in production/);
      assert.match(await row.innerText(), /Enabled: off → on/);
      await screen(owner, '12-flag-history');
      assert.deepEqual(browserErrors, []);
    });
  });
}
