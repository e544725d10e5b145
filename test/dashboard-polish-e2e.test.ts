import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { buildDashboard } from '../dashboard/build.ts';
import { chromiumMissing, launchChromium } from './support/browser.ts';
import { ADMIN_TOKEN, createTestContext, type TestContext } from './support/context.ts';
import { createForm, submitJson, submitMultipart } from './support/forms.ts';
import { freePort } from './support/process.ts';

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
