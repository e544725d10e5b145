import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { buildDashboard } from '../../dashboard/build.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { ADMIN_TOKEN, createTestContext, type TestContext } from '../support/context.ts';
import { createForm, submitJson, submitMultipart } from '../support/forms.ts';
import { freePort } from '../support/process.ts';

// Issue 31, items 13 to 15 in headless Chromium: what a demanding user notices on a phone (390 px, touch),
// in the forms' screens, and in the layouts.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-dashboard-polish-'));

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

async function signIn(browser: BrowserContext, base: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${base}/sign-in`);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
  return page;
}

describe('dashboard polish (issue 31 items 13 to 15)', { skip: chromiumMissing }, () => {
  let ctx: TestContext;
  let base: string;
  let project: { key: string; name: string };
  let formKey: string;

  before(async () => {
    await buildDashboard(WEB_DIR);
    const port = freePort();
    base = `http://127.0.0.1:${port}`;
    ctx = await createTestContext('sqlite', { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: WEB_DIR });
    await ctx.app.listen({ port, host: '127.0.0.1' });
    project = (await ctx.admin('POST', '/admin/v1/projects', { name: 'Web shop' })).json();
    for (const slug of ['checkout', 'dark-banner'])
      assert.equal((await ctx.admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug, description: `The ${slug}` })).statusCode, 201);
    formKey = (await createForm(ctx, { name: 'Contact us', honeypot: 'website', uploadsEnabled: true })).key;
    // Oldest first: Ada, a bot (spam), Bob, then Cleo with a picture.
    assert.equal((await submitJson(ctx, formKey, { name: 'Ada', message: 'Hello' })).statusCode, 200);
    assert.equal((await submitJson(ctx, formKey, { name: 'Bot', website: 'http://spam.example' })).statusCode, 200);
    assert.equal((await submitJson(ctx, formKey, { name: 'Bob', message: 'Hi' })).statusCode, 200);
    const res = await submitMultipart(ctx, formKey, [
      { name: 'name', value: 'Cleo' },
      { name: 'photo', filename: 'dot.png', contentType: 'image/png', content: PNG },
    ]);
    assert.equal(res.statusCode, 200, res.body);
  });
  after(async () => {
    await ctx?.close();
  });

  it('item 14: on a touch phone the first flag shows without scrolling, the flag page has section links, no "press /" hint', { timeout: 120_000 }, async () => {
    const browser = await launchChromium({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
    try {
      const page = await signIn(browser, base);
      await page.goto(`${base}/projects/${project.key}`);
      const first = page.getByRole('link', { name: 'checkout', exact: true });
      await first.waitFor();
      // The first flag's row is on the first screen: no form and no rows of tabs before it.
      const box = await first.boundingBox();
      assert.ok(box, 'the first flag is laid out');
      assert.ok(box.y + box.height <= 844, `the first flag is at ${box.y} px, below the first screen`);
      // The New flag form waits behind its button, and opens from it.
      assert.equal(await page.getByLabel('Slug').count(), 0, 'the New flag form is closed');
      await page.getByRole('button', { name: 'New flag' }).click();
      await page.getByLabel('Slug').waitFor();
      // The project's tabs are one row (each tab at the same height).
      const tabs = page.getByRole('navigation', { name: 'Project' }).getByRole('link');
      const tops = new Set((await tabs.evaluateAll((links) => links.map((l) => Math.round(l.getBoundingClientRect().top)))) as number[]);
      assert.equal(tops.size, 1, `the project's tabs are in ${tops.size} rows`);
      // A touch screen has no "/" key to press.
      const hint = page.getByText('By slug or description');
      await hint.waitFor();
      assert.doesNotMatch(await hint.innerText(), /press \//);

      await page.goto(`${base}/projects/${project.key}/flags/checkout`);
      const sections = page.getByRole('navigation', { name: 'Sections of the flag' });
      await sections.waitFor();
      for (const name of ['Switches', 'Targeting', 'Usage', 'Settings', 'History']) {
        const link = sections.getByRole('link', { name, exact: true });
        const target = (await link.getAttribute('href'))!.slice(1);
        assert.equal(await page.locator(`[id="${target}"]`).count(), 1, `${name} goes to #${target}`);
      }
      await sections.getByRole('link', { name: 'History', exact: true }).click();
      await page.waitForFunction(() => location.hash === '#history');
      await page.getByRole('heading', { name: 'History', level: 2 }).waitFor();
      const history = await page.getByRole('heading', { name: 'History', level: 2 }).boundingBox();
      assert.ok(history && history.y >= 0 && history.y < 844, `the History section is on screen after its link (at ${history?.y})`);
      // The page does not scroll sideways.
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scrolling');
    } finally {
      await browser.close();
    }
  });

  it(
    'item 15: the inbox opens without spam; a submission has the form in its breadcrumb, newer/older links, an image preview',
    { timeout: 120_000 },
    async () => {
      const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
      try {
        const page = await signIn(browser, base);
        await page.goto(`${base}/forms/${formKey}/submissions`);
        const list = page.getByRole('table');
        await list.getByText('Bob').first().waitFor();
        assert.equal(await list.getByText('Bot', { exact: true }).count(), 0, 'the inbox opens without spam');
        assert.equal(
          await page.getByRole('navigation', { name: 'Submission filter' }).getByRole('link', { name: 'Inbox' }).getAttribute('aria-current'),
          'page',
        );

        const submissions = (await ctx.admin('GET', `/admin/v1/forms/${formKey}/submissions?spam=false`)).json().submissions as Array<{ id: string }>;
        assert.equal(submissions.length, 3);
        const [cleo, bob, ada] = submissions.map((s) => s.id);
        await page.goto(`${base}/forms/${formKey}/submissions/${bob}`);
        await page.getByRole('heading', { name: 'Submission', level: 1 }).waitFor();
        const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
        await crumbs.getByRole('link', { name: 'Contact us' }).waitFor();
        const others = page.getByRole('navigation', { name: 'Other submissions' });
        await others.waitFor();
        assert.equal(await others.getByRole('link', { name: /Newer/ }).getAttribute('href'), `/forms/${formKey}/submissions/${cleo}`);
        assert.equal(
          await others.getByRole('link', { name: /Older/ }).getAttribute('href'),
          `/forms/${formKey}/submissions/${ada}`,
          'the spam between them is skipped',
        );
        await others.getByRole('link', { name: /Newer/ }).click();
        const preview = page.getByRole('img', { name: 'Preview of dot.png' });
        await preview.waitFor();
        await page.waitForFunction(() => [...document.images].some((i) => i.complete && i.naturalWidth === 1));
        assert.equal(await others.getByRole('link', { name: /Newer/ }).count(), 0, 'the newest has no newer one');
      } finally {
        await browser.close();
      }
    },
  );

  for (const width of [1280, 390])
    it(`item 13: aligned fields, protection rows laid out one way, switches with their label beside them (${width} px)`, { timeout: 120_000 }, async () => {
      const browser = await launchChromium({ viewport: { width, height: 900 } });
      const box = async (locator: ReturnType<Page['locator']>) => {
        const b = await locator.boundingBox();
        assert.ok(b, 'laid out');
        return b;
      };
      try {
        const page = await signIn(browser, base);
        // The owner form: the e-mail and the password inputs side by side share their top (on a phone, their left).
        await page.goto(`${base}/members`);
        const owner = page.getByRole('form', { name: 'Create an owner account' });
        const email = await box(owner.getByLabel('Owner e-mail address'));
        const password = await box(owner.getByLabel('Owner password'));
        const create = await box(owner.getByRole('button', { name: 'Create owner' }));
        if (width === 1280) {
          assert.ok(Math.abs(email.y - password.y) <= 1, `owner inputs at ${email.y} and ${password.y}`);
          assert.ok(Math.abs(create.y - email.y) <= 4, `the button at ${create.y}, the inputs at ${email.y}`);
        } else assert.ok(Math.abs(email.x - password.x) <= 1, `owner inputs at x ${email.x} and ${password.x}`);

        // The inbox's search and filters on one baseline: their inputs share their top.
        await page.goto(`${base}/forms/${formKey}/submissions`);
        const filters = page.locator('.filters');
        await filters.getByLabel('Search').waitFor();
        if (width === 1280) {
          // Wide enough for every control in one row, where a hint under some lifted them above the others.
          await page.setViewportSize({ width: 1800, height: 900 });
          // Controls of one row (they wrap on a narrower screen) share their top: a hint under one lifts none.
          const tops = await Promise.all(
            ['Search', 'Field', 'Equals', 'Order', 'Files'].map(async (label) => (await box(filters.getByLabel(label, { exact: true }))).y),
          );
          for (const top of tops) {
            const row = tops.filter((t) => Math.abs(t - top) < 40);
            assert.ok(Math.max(...row) - Math.min(...row) <= 1, `the inbox's controls at ${tops.join(', ')}`);
          }
          await page.setViewportSize({ width, height: 900 });
        }

        // Protection rows: the switch, the approvals and the button at the same place in every row.
        await page.goto(`${base}/projects/${project.key}/changes`);
        const rows = page.locator('ul.protection > li');
        await rows.first().waitFor();
        const layout = [];
        for (let i = 0; i < (await rows.count()); i++) {
          const row = rows.nth(i);
          const parts = [await box(row.getByRole('switch')), await box(row.getByRole('spinbutton')), await box(row.getByRole('button', { name: /^Save/ }))];
          const top = parts[0]!.y;
          layout.push(parts.map((b) => `${Math.round(b.x)},${Math.round(b.y - top)}`).join(' '));
        }
        assert.ok(layout.length >= 2);
        assert.equal(new Set(layout).size, 1, `protection rows laid out ${new Set(layout).size} ways: ${layout.join(' | ')}`);

        // A switch's label is beside it, level with it, and the switch says what it means.
        await page.goto(`${base}/projects/${project.key}/flags/checkout`);
        const labelled = page.getByRole('switch', { name: 'Enabled in production' });
        const sw = await box(labelled);
        const label = await box(page.locator('label', { hasText: 'Enabled in production' }));
        assert.ok(label.x >= sw.x + sw.width, `the label at x ${label.x}, the switch ends at ${sw.x + sw.width}`);
        assert.ok(Math.abs(label.y + label.height / 2 - (sw.y + sw.height / 2)) <= 4, 'the label is level with the switch');
        // The condition's negation says what it does (it read "Off / not").
        if (width === 1280) {
          const targeting = page.getByRole('form', { name: /^Targeting in / });
          await targeting.getByRole('button', { name: /^Add rule in / }).click();
          await targeting.getByRole('button', { name: 'Add condition to rule 1' }).click();
          const negate = targeting.getByRole('group', { name: 'Condition 1 of rule 1' }).getByRole('switch', { name: /^(not|Negate)/ });
          assert.equal(await negate.getAttribute('aria-checked'), 'false');
          const text = (await negate.evaluate((el) => el.closest('.switch-field')?.textContent ?? '')).trim();
          assert.match(text, /does not match/, `the negation reads "${text}"`);
        }
      } finally {
        await browser.close();
      }
    });

  it('item 14: a mouse and keyboard at 1280 px keeps the "press /" hint and the open New flag form', { timeout: 120_000 }, async () => {
    const browser = await launchChromium({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await signIn(browser, base);
      await page.goto(`${base}/projects/${project.key}`);
      await page.getByLabel('Slug').waitFor();
      assert.match(await page.getByText('By slug or description').innerText(), /press \/ to search/);
    } finally {
      await browser.close();
    }
  });
});
