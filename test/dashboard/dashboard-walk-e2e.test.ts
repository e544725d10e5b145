import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { buildDashboard } from '../../dashboard/build.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { ADMIN_TOKEN, createTestContext, type TestContext } from '../support/context.ts';
import { startWebhookReceiver } from '../support/forms.ts';
import { createMember } from '../support/members.ts';
import { freePort } from '../support/process.ts';

// Issue 31's last "done when": a walk through every screen at 1280 and 390 px, light and dark, with the
// screenshots looked at (test/dashboard/dashboard-screens-e2e.test.ts takes them). What that walk found
// is checked here, in headless Chromium against the real server: the history and the audit log name
// webhooks, metrics, experiments and releases and read lists as words, within their box; on a phone the
// changes of the history, the audit log and the comparison are on screen; rows of fields keep their
// buttons and switches level with the inputs; the flag page's section links are all in view.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-dashboard-walk-'));
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers of the admin API, read field by field
type Doc = Record<string, any>;

async function box(locator: Locator) {
  const b = await locator.boundingBox();
  assert.ok(b, 'laid out');
  return b;
}
const middle = (b: { y: number; height: number }) => b.y + b.height / 2;

describe('what the walk through every screen found (issue 31)', { skip: chromiumMissing }, () => {
  let ctx: TestContext;
  let base: string;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let project: { key: string; environments: Array<{ key: string; name: string }> };

  const ok = async (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, status = 200): Promise<Doc> => {
    const res = await ctx.admin(method, url, body);
    assert.equal(res.statusCode, status, res.body);
    return res.json() as Doc;
  };
  const env = (i: number) => `/admin/v1/projects/${project.key}/environments/${project.environments[i]!.key}`;

  before(async () => {
    await buildDashboard(WEB_DIR);
    const port = freePort();
    base = `http://127.0.0.1:${port}`;
    ctx = await createTestContext('sqlite', { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: WEB_DIR, FLAGPOST_WEBHOOK_TARGETS: 'private' });
    await ctx.app.listen({ port, host: '127.0.0.1' });
    project = (await ok('POST', '/admin/v1/projects', { name: 'Web shop' }, 201)) as typeof project;
    await ok(
      'POST',
      `/admin/v1/projects/${project.key}/flags`,
      { slug: 'checkout', description: 'New checkout flow with a rather long description that has to wrap on a phone' },
      201,
    );
    await ok('PATCH', `${env(2)}/flags/checkout`, { description: 'The checkout as it is in production' });
    await ok('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'layout', type: 'string', variants: { a: 'A', b: 'B' }, defaultVariant: 'a' }, 201);
    await ok('PATCH', `${env(0)}/flags/layout`, {
      rules: [
        {
          id: 'even',
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
    // A flag deleted: its entry lists the environments it had.
    await ok('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'gone' }, 201);
    assert.equal((await ctx.admin('DELETE', `/admin/v1/projects/${project.key}/flags/gone`)).statusCode, 204);
    // A webhook whose events change, a metric, an experiment that starts, a release.
    receiver = await startWebhookReceiver();
    const hook = await ok('POST', `/admin/v1/projects/${project.key}/webhooks`, { url: receiver.url }, 201);
    await ok('PATCH', `/admin/v1/projects/${project.key}/webhooks/${hook.webhook?.id ?? hook.id}`, { events: ['flag.created', 'flag.updated'] });
    await ok(
      'POST',
      `/admin/v1/projects/${project.key}/metrics`,
      { key: 'purchases', name: 'Purchases', event: 'purchase', type: 'proportion', direction: 'increase' },
      201,
    );
    await ok('POST', `${env(0)}/experiments`, { key: 'layout-test', name: 'Layout test', flagKey: 'layout', controlVariant: 'a', metrics: ['purchases'] }, 201);
    await ok('POST', `${env(0)}/experiments/layout-test/start`);
    await ok(
      'POST',
      `${env(0)}/flags/checkout/releases`,
      { variant: 'on', baseline: 'off', steps: [{ percent: 50, holdSeconds: 3600 }, { percent: 100 }] },
      201,
    );
  });
  after(async () => {
    await ctx?.close();
    await receiver?.close();
  });

  const open1280 = () => open(1280);
  async function open(width: 1280 | 390): Promise<{ browser: BrowserContext; page: Page }> {
    const browser = await launchChromium({ viewport: { width, height: 860 } });
    const page = await browser.newPage();
    await page.goto(`${base}/sign-in`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    return { browser, page };
  }

  it(
    'names webhooks, metrics, experiments and releases in the history, reads lists as words, and keeps the table in its box (1280 px)',
    { timeout: 120_000 },
    async () => {
      const { browser, page } = await open(1280);
      try {
        await page.goto(`${base}/projects/${project.key}/history`);
        const history = page.getByRole('table', { name: /history/i });
        const host = new URL(receiver.url).host;
        for (const what of [
          `Webhook to ${host} created`,
          `Webhook to ${host} changed`,
          'Metric “Purchases” created',
          'Experiment “Layout test” started',
          'Release of checkout started',
        ])
          await history
            .getByRole('cell', { name: new RegExp(`^${what.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) })
            .first()
            .waitFor({ timeout: 10_000 });
        const text = await history.innerText();
        assert.doesNotMatch(text, /\b[0-9A-HJKMNP-TV-Z]{26}\b/, 'no id in the history');
        assert.doesNotMatch(text, /\["/, 'no list as JSON');
        assert.doesNotMatch(text, /\{"/, 'no object as JSON');
        assert.match(text, /→ flag\.created, flag\.updated\n/);
        assert.match(text, /Steps: 50 % for 1 h, 100 %/);
        assert.match(text, /Split: 50\/50 \(a\/b\)/);
        assert.match(text, /Written by: its release/);
        assert.match(text, /Environments: development, staging, production/);
        for (const e of project.environments) assert.ok(!text.includes(e.key), `no environment key (${e.name}) in the history`);
        // A long value wraps in its cell: the table is no wider than its box.
        const wrap = await page
          .locator('.table-wrap', { has: page.locator('table.history') })
          .evaluate((e) => ({ scroll: e.scrollWidth, client: e.clientWidth }));
        assert.ok(wrap.scroll <= wrap.client, `the history is ${wrap.scroll} px wide in a box of ${wrap.client} px`);
        // The changes start on the row's first line, level with the other cells.
        const row = history.getByRole('row').nth(1);
        const cell = await box(row.getByRole('cell').nth(3));
        const list = await box(row.locator('ul.diff'));
        assert.ok(list.y - cell.y <= 12, `the changes start ${list.y - cell.y} px below the top of their cell`);
      } finally {
        await browser.close();
      }
    },
  );

  it(
    'lays rows of fields out level at 1280 px: protection rows, a variant and its Remove button, the flag page’s section links, the sign-in card',
    { timeout: 120_000 },
    async () => {
      const { browser, page } = await open(1280);
      try {
        // Protected environments: the switch, the approvals' input and Save on one line, however the label wraps.
        await page.goto(`${base}/projects/${project.key}/changes`);
        const rows = page.locator('ul.protection > li');
        await rows.first().waitFor();
        for (let i = 0; i < (await rows.count()); i++) {
          const row = rows.nth(i);
          const [sw, input, button] = [
            await box(row.getByRole('switch')),
            await box(row.getByRole('spinbutton')),
            await box(row.getByRole('button', { name: /^Save/ })),
          ];
          assert.ok(Math.abs(middle(sw) - middle(input)) <= 3, `row ${i}: the switch at ${middle(sw)}, the input at ${middle(input)}`);
          assert.ok(Math.abs(middle(button) - middle(input)) <= 3, `row ${i}: the button at ${middle(button)}, the input at ${middle(input)}`);
        }

        // The flag page: every section link in view, and a variant's Remove button level with its inputs.
        await page.goto(`${base}/projects/${project.key}/flags/checkout`);
        const sections = page.getByRole('navigation', { name: 'Sections of the flag' });
        await sections.waitFor();
        const nav = await box(sections);
        for (const link of await sections.getByRole('link').all()) {
          const b = await box(link);
          assert.ok(b.x + b.width <= nav.x + nav.width + 1, `${await link.innerText()} ends at ${b.x + b.width}, the row at ${nav.x + nav.width}`);
        }
        const variant = page.getByRole('group', { name: /^Variant 1 of the flag in / }).first();
        const name = await box(variant.getByLabel('Name'));
        const remove = await box(variant.getByRole('button', { name: /^Remove variant/ }));
        assert.ok(Math.abs(middle(remove) - middle(name)) <= 3, `Remove at ${middle(remove)}, the name's input at ${middle(name)}`);

        // A new segment's condition is the new segment's, and its case switch says what it does.
        await page.goto(`${base}/projects/${project.key}/segments`);
        const condition = page.getByRole('group', { name: 'Condition 1 of the new segment' });
        await condition.getByRole('switch', { name: 'Ignore case' }).waitFor();

        // The sign-in card's first words sit at its padding, with no paragraph margin above them.
        await page.getByRole('button', { name: 'Sign out' }).click();
        const token = page.getByRole('form', { name: 'Token sign-in' });
        await token.waitFor();
        const card = await box(token);
        const words = await box(token.locator('p').first());
        assert.ok(words.y - card.y <= 20, `the first words are ${words.y - card.y} px below the card's top`);
      } finally {
        await browser.close();
      }
    },
  );

  it('says who may approve a change request while it is open, and nothing of it once applied', { timeout: 120_000 }, async () => {
    await ok('PATCH', env(2), { protected: true, requiredApprovals: 1 });
    const reviewer = await createMember(ctx, 'reviewer@example.com', 'owner');
    const propose = async (title: string) =>
      (
        await ok(
          'POST',
          `/admin/v1/projects/${project.key}/change-requests`,
          { environment: project.environments[2]!.key, title, flags: [{ slug: 'checkout', values: { description: title } }], submit: true },
          201,
        )
      ).id as string;
    const inReview = await propose('Open request');
    const applied = await propose('Applied request');
    const url = `/admin/v1/projects/${project.key}/change-requests/${applied}`;
    assert.equal((await reviewer.call('POST', `${url}/approve`, { revision: 1 })).statusCode, 200);
    assert.equal((await reviewer.call('POST', `${url}/apply`, {})).statusCode, 200);
    const { browser, page } = await open1280();
    try {
      await page.goto(`${base}/projects/${project.key}/changes/${inReview}`);
      const approvals = page.getByRole('region', { name: /^Approvals/ });
      await approvals.getByText('Approving approves revision 1, as shown here.', { exact: false }).waitFor();
      await page.goto(`${base}/projects/${project.key}/changes/${applied}`);
      await page.getByText('reviewer@example.com').first().waitFor();
      assert.doesNotMatch(await approvals.innerText(), /cannot approve|revision/, 'an applied request says nothing of who may approve it');
    } finally {
      await browser.close();
    }
  });

  it(
    'shows on a phone (390 px) the changes of the history, the audit log and the comparison, headers unbroken, buttons under their fields',
    { timeout: 120_000 },
    async () => {
      const { browser, page } = await open(390);
      const onScreen = async (locator: Locator, what: string) => {
        await locator.waitFor();
        const b = await box(locator);
        assert.ok(b.x >= 0 && b.x + b.width <= 390, `${what} spans x ${Math.round(b.x)} to ${Math.round(b.x + b.width)} on a 390 px screen`);
      };
      try {
        await page.goto(`${base}/projects/${project.key}/history`);
        await onScreen(page.locator('table.history ul.diff').first(), 'the history’s changes');
        await page.goto(`${base}/audit`);
        await onScreen(page.locator('table.history ul.diff').first(), 'the audit log’s changes');
        await page.goto(`${base}/projects/${project.key}/compare`);
        await page.getByLabel('From', { exact: true }).selectOption({ label: 'development' });
        await page.getByLabel('To', { exact: true }).selectOption({ label: 'production' });
        await onScreen(page.getByRole('list', { name: 'What promoting checkout does to production' }), 'what promotion does');

        // The flag list's header breaks no environment's name inside a word ("developme|nt").
        await page.goto(`${base}/projects/${project.key}`);
        const header = page.getByRole('columnheader', { name: 'development' });
        await header.waitFor();
        const lines = await header.evaluate((th) => {
          const range = document.createRange();
          range.selectNodeContents(th.firstChild!);
          return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
        });
        assert.equal(lines, 1, 'development is on one line');

        // Nor a metric's event name in the experiments' metrics ("purch|ase").
        await page.goto(`${base}/projects/${project.key}/experiments`);
        const event = page.getByRole('table', { name: /Metrics/ }).locator('code', { hasText: /^purchase$/ });
        await event.waitFor();
        assert.equal(await event.evaluate((code) => new Set([...code.getClientRects()].map((r) => Math.round(r.top))).size), 1, 'purchase is on one line');

        // A button under its field follows it, with no gap left for a label it does not have.
        await page.goto(`${base}/members`);
        const invite = page.getByRole('form', { name: 'Invite a member' });
        const role = await box(invite.getByLabel('Role'));
        const button = await box(invite.getByRole('button', { name: 'Invite' }));
        assert.ok(button.y - (role.y + role.height) <= 16, `Invite is ${button.y - (role.y + role.height)} px below the role`);

        // A condition's fields stack, its Remove button right under the values (no field stretched tall).
        await page.goto(`${base}/projects/${project.key}/segments`);
        const condition = page.getByRole('group', { name: 'Condition 1 of the new segment' });
        const values = await box(condition.locator('.field').filter({ has: page.getByLabel('Values', { exact: true }) }));
        const remove = await box(condition.getByRole('button', { name: /^Remove condition 1/ }));
        assert.ok(remove.y - (values.y + values.height) <= 24, `Remove is ${remove.y - (values.y + values.height)} px below the values and their hint`);

        // The open menu does not name Flagpost a second time.
        await page.getByRole('button', { name: 'Menu' }).click();
        await page.getByRole('navigation', { name: 'Main' }).waitFor();
        const brands = await page
          .getByRole('link', { name: 'Flagpost' })
          .evaluateAll((links) => links.filter((l) => (l as HTMLElement).offsetParent !== null).length);
        assert.equal(brands, 1, 'one Flagpost link in view');
      } finally {
        await browser.close();
      }
    },
  );
});
