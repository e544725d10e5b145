import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { buildDashboard } from '../../dashboard/build.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createTestContext, dialects, type TestContext } from '../support/context.ts';
import { createMember, type Member } from '../support/members.ts';
import { freePort, ROOT } from '../support/process.ts';

// Issue 31 ("What a new user found") in headless Chromium, on both engines: a reviewer reads a targeting
// change in words, as the rules editor shows it, before and after it is applied; the history and the
// comparison of environments say it in the same words, and the comparison shows what promotion would do
// to the target. Screens are photographed under test-output/dashboard-review/<engine>/.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-dashboard-review-'));
const PASSWORD = 'a long test password 0123';
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers of the admin API, read field by field
type Doc = Record<string, any>;

for (const dialect of dialects()) {
  describe(`dashboard review of changes in headless Chromium [${dialect}]`, { skip: chromiumMissing }, () => {
    let ctx: TestContext;
    let base: string;
    let browser: BrowserContext;
    let ann: Member;
    let halfRule: Doc;
    let project: { key: string; environments: Array<{ key: string; name: string }> };
    const shots = path.join(ROOT, 'test-output', 'dashboard-review', dialect);

    const ok = async (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, status = 200): Promise<Doc> => {
      const res = await ctx.admin(method, url, body);
      assert.equal(res.statusCode, status, res.body);
      return res.json() as Doc;
    };
    const signIn = async (page: Page, email: string) => {
      await page.goto(`${base}/sign-in`);
      await page.getByLabel('E-mail address').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('link', { name: 'Projects' }).first().waitFor();
    };
    const flagUrl = (env: number, slug: string) => `/admin/v1/projects/${project.key}/environments/${project.environments[env]!.key}/flags/${slug}`;

    before(async () => {
      await buildDashboard(WEB_DIR);
      const port = freePort();
      base = `http://127.0.0.1:${port}`;
      ctx = await createTestContext(dialect, { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: WEB_DIR });
      await ctx.app.listen({ port, host: '127.0.0.1' });
      fs.mkdirSync(shots, { recursive: true });
      browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
      await createMember(ctx, 'owner@example.com', 'owner');
      ann = await createMember(ctx, 'ann@example.com', 'editor');
      await createMember(ctx, 'bob@example.com', 'editor');
      project = (await ok('POST', '/admin/v1/projects', { name: 'Web shop' }, 201)) as typeof project;
      await ok('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'checkout', enabled: true }, 201);
      // Production serves half of its users the new checkout; then it is protected.
      halfRule = (
        await ok('PATCH', flagUrl(2, 'checkout'), {
          rules: [
            {
              name: 'Half',
              serve: {
                split: {
                  weights: [
                    { variant: 'on', weight: 50 },
                    { variant: 'off', weight: 50 },
                  ],
                },
              },
            },
          ],
        })
      ).rules[0];
      await ok('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[2]!.key}`, { protected: true, requiredApprovals: 1 });
    });
    after(async () => {
      await browser?.close();
      await ctx?.close();
    });

    it('shows a rule change in words, whole, to the reviewer and once applied; the history says it the same way (item 3)', { timeout: 300_000 }, async () => {
      const half = halfRule;
      const staff = { name: 'Staff', conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@example.com'] }], serve: { variant: 'on' } };
      const quarter = {
        ...half,
        serve: {
          split: {
            ...half.serve.split,
            weights: [
              { variant: 'on', weight: 25 },
              { variant: 'off', weight: 75 },
            ],
          },
        },
      };
      const created = await ann.call('POST', `/admin/v1/projects/${project.key}/change-requests`, {
        environment: project.environments[2]!.key,
        title: 'Staff first, a quarter for the rest',
        flags: [{ slug: 'checkout', values: { rules: [staff, quarter] } }],
        submit: true,
      });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().id as string;
      const added = 'added rule Staff: email ends with @example.com → on';
      const split = 'rule Half: split 50/50 → 25/75 (on/off)';

      const page = await browser.newPage();
      await signIn(page, 'bob@example.com');
      await page.goto(`${base}/projects/${project.key}/changes/${id}`);
      const changes = page.getByRole('list', { name: 'Changes of flag checkout' });
      await changes.getByText(added, { exact: true }).waitFor();
      await changes.getByText(split, { exact: true }).waitFor();
      assert.doesNotMatch(await changes.innerText(), /…|"weights"/, 'no cut-off JSON');
      await page.screenshot({ path: path.join(shots, 'change-request-in-words.png'), fullPage: true });

      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('button', { name: 'Apply now' }).click();
      await page.getByRole('dialog', { name: 'Apply to production now?' }).getByRole('button', { name: 'Apply now' }).click();
      await page.getByText('Applied', { exact: true }).waitFor();
      // Once applied, the request still says what it did (it used to compare with the configuration now: "Same as now.").
      await changes.getByText(added, { exact: true }).waitFor();
      await changes.getByText(split, { exact: true }).waitFor();
      assert.equal(await page.getByText('Same as now.').count(), 0);
      await page.screenshot({ path: path.join(shots, 'change-request-applied.png'), fullPage: true });

      // A later change of the flag leaves the applied request as it was.
      await ok('PATCH', `${flagUrl(2, 'checkout')}?bypassProtection=true`, { rules: [] });
      await page.reload();
      await changes.getByText(added, { exact: true }).waitFor();

      await page.goto(`${base}/projects/${project.key}/history`);
      const history = page.getByRole('table', { name: /history/i });
      await history.getByText(added, { exact: true }).first().waitFor();
      await history.getByText(split, { exact: true }).first().waitFor();
      await history.getByText('removed rule Staff: email ends with @example.com → on', { exact: true }).first().waitFor();
      await page.screenshot({ path: path.join(shots, 'history-in-words.png'), fullPage: true });
      await page.close();
    });

    it('compares environments as what promotion would do to the target, in the words of the request (item 1)', { timeout: 300_000 }, async () => {
      // Development has no rule and a description; production gets a rule back (bypassing its protection).
      await ok('PATCH', flagUrl(0, 'checkout'), { description: 'The new checkout' });
      await ok('PATCH', `${flagUrl(2, 'checkout')}?bypassProtection=true`, {
        rules: [{ name: 'Staff', conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@example.com'] }], serve: { variant: 'on' } }],
      });
      const page = await browser.newPage();
      await signIn(page, 'bob@example.com');
      await page.goto(`${base}/projects/${project.key}/compare`);
      await page.getByRole('heading', { name: 'Compare environments' }).waitFor();
      await page.getByLabel('From', { exact: true }).selectOption({ label: 'development' });
      await page.getByLabel('To', { exact: true }).selectOption({ label: 'production' });
      const row = page.getByRole('list', { name: 'What promoting checkout does to production' });
      // Promoting takes production's rule away and gives it development's description.
      await row.getByText('removed rule Staff: email ends with @example.com → on', { exact: true }).waitFor();
      assert.equal(await row.locator('ins').filter({ hasText: 'The new checkout' }).count(), 1, "the source's value is what production gets");
      assert.equal(await row.locator('del').filter({ hasText: 'The new checkout' }).count(), 0);
      await page.screenshot({ path: path.join(shots, 'compare.png'), fullPage: true });

      // The request that promotion opens says the same.
      await page.getByRole('switch', { name: 'Promote checkout' }).check();
      await page.getByRole('button', { name: 'Promote 1 flag to production' }).click();
      await page.getByRole('link', { name: 'a change request' }).click();
      const request = page.getByRole('list', { name: 'Changes of flag checkout' });
      await request.getByText('removed rule Staff: email ends with @example.com → on', { exact: true }).waitFor();
      assert.equal(await request.locator('ins').filter({ hasText: 'The new checkout' }).count(), 1);
      await page.close();
    });

    it(
      'turns an edit of protected production into a change request, and lets an owner save it without review after saying so (item 4)',
      { timeout: 300_000 },
      async () => {
        const production = () =>
          ok('GET', `/admin/v1/projects/${project.key}/flags`).then((l) => l.flags.find((f: Doc) => f.slug === 'checkout').environments[2]);
        assert.equal((await production()).enabled, true);
        const page = await browser.newPage();
        await signIn(page, 'ann@example.com');
        await page.goto(`${base}/projects/${project.key}`);
        await page.getByRole('columnheader', { name: 'production (protected)' }).waitFor();
        await page.getByRole('switch', { name: 'checkout in production' }).click();
        const dialog = page.getByRole('dialog', { name: 'production is protected' });
        await dialog.waitFor();
        assert.equal(await dialog.getByLabel('Title of the change request').inputValue(), 'Switch checkout off in production');
        assert.equal(await dialog.getByRole('button', { name: 'Save without review' }).count(), 0, 'an editor has no bypass');
        await page.screenshot({ path: path.join(shots, 'protected-switch.png'), fullPage: true });
        await dialog.getByRole('button', { name: 'Propose for review' }).click();
        await dialog.getByRole('link', { name: 'The change request' }).click();
        await page.getByRole('heading', { name: 'Switch checkout off in production' }).waitFor();
        await page.screenshot({ path: path.join(shots, 'protected-switch-request.png'), fullPage: true });
        await page.getByRole('list', { name: 'Changes of flag checkout' }).getByText('Default variant').waitFor();
        assert.equal((await production()).enabled, true, 'proposed, not written');

        // The flag page's Save and targeting editor of production say so and propose too.
        await page.goto(`${base}/projects/${project.key}/flags/checkout`);
        await page.getByRole('tab', { name: 'production' }).click();
        await page.getByRole('button', { name: 'Save targeting in production for review' }).waitFor();
        await page.getByText('production is protected: saving proposes a change request for review.').first().waitFor();
        await page.getByRole('button', { name: 'Sign out' }).click();

        // An owner may save without review, in the same dialog.
        await signIn(page, 'owner@example.com');
        await page.goto(`${base}/projects/${project.key}`);
        await page.getByRole('switch', { name: 'checkout in production' }).click();
        await dialog.getByRole('button', { name: 'Save without review' }).click();
        await dialog.waitFor({ state: 'hidden' });
        for (let i = 0; i < 50 && (await production()).enabled; i++) await new Promise((r) => setTimeout(r, 100));
        assert.equal((await production()).enabled, false);
        const audit = await ok('GET', `/admin/v1/audit?project=${project.key}&entity=flag&entityId=checkout`);
        assert.deepEqual(audit.entries[0].changes.protectionBypassed, { after: true });
        await page.close();
      },
    );

    it('explains a split without a targetingKey as such in the playground, not as a failed prerequisite (item 6)', { timeout: 300_000 }, async () => {
      await ok(
        'POST',
        `/admin/v1/projects/${project.key}/flags`,
        { slug: 'layout', type: 'string', variants: { a: 'A', b: 'B' }, defaultVariant: 'a', enabled: true },
        201,
      );
      await ok('PATCH', flagUrl(0, 'layout'), {
        rules: [
          {
            name: 'Even',
            serve: {
              split: {
                weights: [
                  { variant: 'a', weight: 50 },
                  { variant: 'b', weight: 50 },
                ],
              },
            },
          },
        ],
      });
      const page = await browser.newPage();
      await signIn(page, 'bob@example.com');
      await page.goto(`${base}/projects/${project.key}/playground`);
      await page.getByRole('form', { name: 'Playground' }).waitFor();
      await page.getByLabel('Environment', { exact: true }).selectOption({ label: 'development' });
      await page.getByLabel('Flag', { exact: true }).selectOption('layout');
      await page.getByLabel('Evaluation context (JSON)').fill(JSON.stringify({ country: 'CH' }));
      await page.getByRole('button', { name: 'Evaluate layout in development' }).click();
      const result = page.getByRole('article', { name: 'layout' });
      await result.getByText('Even').waitFor();
      const text = await result.innerText();
      assert.doesNotMatch(text, /prerequisite/, text);
      assert.match(text, /the context has no targetingKey to split by/, text);
      await page.screenshot({ path: path.join(shots, 'playground-split-without-key.png'), fullPage: true });
      await page.close();
    });

    it(
      'gives a clean New flag form after each flag, marks a bad JSON value at the value, and follows a renamed default serve (items 8 and 9)',
      { timeout: 300_000 },
      async () => {
        const page = await browser.newPage();
        await signIn(page, 'bob@example.com');
        await page.goto(`${base}/projects/${project.key}`);
        const form = page.getByRole('region', { name: 'New flag' }).or(page.locator('section', { has: page.getByRole('heading', { name: 'New flag' }) }));
        await page.getByLabel('Type').selectOption('object');
        await page.getByRole('group', { name: 'Variant 1 of the new flag' }).getByLabel('Value (JSON object)').fill('{not json');
        await page.getByLabel('Slug').fill('theme');
        await page.getByRole('button', { name: 'Create flag' }).click();
        const first = page.getByRole('group', { name: 'Variant 1 of the new flag' });
        await first.getByText('The value must be a JSON object').waitFor();
        assert.equal(await first.getByLabel('Name').getAttribute('aria-invalid'), null, 'the name is fine');
        assert.equal(await first.getByLabel('Value (JSON object)').getAttribute('aria-invalid'), 'true');
        await first.getByLabel('Value (JSON object)').fill('{"dark": false}');
        // Renaming the default variant keeps it the default serve.
        await first.getByLabel('Name').fill('light');
        assert.equal(await page.getByLabel('Default serve').inputValue(), 'light');
        await page.getByRole('button', { name: 'Create flag' }).click();
        await page.getByRole('link', { name: 'theme' }).waitFor();
        const theme = (await ok('GET', `/admin/v1/projects/${project.key}/flags`)).flags.find((f: Doc) => f.slug === 'theme').environments[0];
        assert.deepEqual([theme.defaultVariant, theme.variants.light], ['light', { dark: false }]);
        // The form is new again: nothing marked, boolean, no variants of the flag before.
        assert.equal(await page.getByLabel('Slug').inputValue(), '');
        assert.equal(await page.getByLabel('Slug').getAttribute('aria-invalid'), null, 'the emptied slug is not marked');
        assert.equal(await form.first().getByText('Required').count(), 0);
        assert.equal(await page.getByLabel('Type').inputValue(), 'boolean');
        assert.equal(await page.getByRole('group', { name: 'Variant 1 of the new flag' }).count(), 0);
        await page.screenshot({ path: path.join(shots, 'new-flag-after-create.png'), fullPage: true });
        await page.close();
      },
    );

    it('gives a clean invitation form after each invitation (item 8)', { timeout: 300_000 }, async () => {
      const page = await browser.newPage();
      await signIn(page, 'owner@example.com');
      await page.goto(`${base}/members`);
      const invite = page.getByRole('form', { name: 'Invite a member' });
      await invite.getByLabel('E-mail address').fill('cy@example.com');
      await invite.getByRole('button', { name: 'Invite' }).click();
      await page.getByText('Send this link to cy@example.com').waitFor();
      assert.equal(await invite.getByLabel('E-mail address').inputValue(), '');
      assert.equal(await invite.getByLabel('E-mail address').getAttribute('aria-invalid'), null, 'the emptied address is not marked');
      assert.equal(await invite.getByText('Required').count(), 0);
      await page.close();
    });

    it('names change requests, environments and forms in the history and the audit log, not their ids (item 12)', { timeout: 300_000 }, async () => {
      const form = await ok('POST', '/admin/v1/forms', { name: 'Contact us' }, 201);
      const requests = (await ok('GET', `/admin/v1/projects/${project.key}/change-requests?status=all`)).changeRequests as Doc[];
      const applied = requests.find((r) => r.title === 'Staff first, a quarter for the rest')!;
      const page = await browser.newPage();
      await signIn(page, 'owner@example.com');
      await page.goto(`${base}/projects/${project.key}/history`);
      const history = page.getByRole('table', { name: /history/i });
      await history.getByText('Change request “Staff first, a quarter for the rest” applied').first().waitFor();
      // The flag's own entry names the request it came from.
      await history.getByRole('listitem').filter({ hasText: 'Change request:' }).getByText('Staff first, a quarter for the rest').first().waitFor();
      const text = await history.innerText();
      assert.doesNotMatch(text, new RegExp(applied.id), 'no change request id');
      await page.goto(`${base}/audit`);
      await page.getByText('Form Contact us created').first().waitFor();
      assert.doesNotMatch(await page.locator('main').innerText(), new RegExp(`Form ${form.key}`));
      await page.screenshot({ path: path.join(shots, 'audit-names.png'), fullPage: true });
      await page.close();
    });

    it('names members, invitations, access tokens, API keys and sign-ins in the audit log, not their ids (item 12)', { timeout: 300_000 }, async () => {
      const users = (await ok('GET', '/admin/v1/users')).users as Doc[];
      const bob = users.find((u) => u.email === 'bob@example.com')!;
      await ok('PATCH', `/admin/v1/users/${bob.id}`, { role: 'viewer' });
      await ok('PATCH', `/admin/v1/users/${bob.id}`, { role: 'editor' });
      await ok('POST', '/admin/v1/invitations', { email: 'carol@example.com', role: 'viewer' }, 201);
      const key = await ok('POST', `/admin/v1/projects/${project.key}/api-keys`, { name: 'storefront' }, 201);
      assert.equal((await ctx.admin('DELETE', `/admin/v1/projects/${project.key}/api-keys/${key.id}`)).statusCode, 204);
      const invitation = ((await ok('GET', '/admin/v1/invitations')).invitations as Doc[]).find((i) => i.email === 'carol@example.com')!;
      const ids = [...users.map((u) => u.id as string), key.id as string, invitation.id as string];

      const page = await browser.newPage();
      await signIn(page, 'owner@example.com');
      await page.goto(`${base}/audit`);
      const log = page.getByRole('table', { name: 'Audit log' });
      for (const [kind, text] of [
        ['member', 'Member bob@example.com role changed'],
        ['invitation', 'Invitation carol@example.com created'],
        ['access token', 'Access token “ann@example.com automation” created'],
        ['api key', 'API key “storefront” revoked'],
        ['sign in', 'Sign-in of ann@example.com succeeded'],
      ] as const) {
        await page.getByLabel('Kind').selectOption({ label: kind });
        await log.getByText(text).first().waitFor();
        const shown = await log.innerText();
        for (const id of ids) assert.ok(!shown.includes(id), `${kind}: ${id} in ${shown}`);
        if (kind === 'member') {
          // The member's unchanged address names the entry; it is not listed as a change.
          const row = log.getByRole('row').filter({ hasText: 'Member bob@example.com role changed' }).first();
          assert.doesNotMatch(await row.innerText(), /E-?mail/i);
          await page.screenshot({ path: path.join(shots, 'audit-members.png'), fullPage: true });
        }
      }
      await page.close();
    });

    it('keeps the design system out of the sidebar; it opens by its address, as the dashboard README says (item 17)', { timeout: 300_000 }, async () => {
      const page = await browser.newPage();
      await signIn(page, 'bob@example.com');
      await page.goto(`${base}/projects`);
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'Design system' }).count(), 0);
      await page.goto(`${base}/design`);
      await page.getByRole('heading', { name: 'Design system' }).first().waitFor();
      assert.match(fs.readFileSync(path.join(ROOT, 'dashboard', 'README.md'), 'utf8'), /`\/design`/);
      await page.close();
    });
  });
}
