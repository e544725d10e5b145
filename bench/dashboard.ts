import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { buildDashboard } from '../dashboard/build.ts';
import { ADMIN_TOKEN, createTestContext } from '../test/support/context.ts';

// npm run bench:dashboard (issue 9): how long headless Chromium takes to show the flags table of a
// project with 1,000 flags in 3 environments (3,000 switches), and to re-render it on a search
// keystroke and on a toggle. Times are measured in the page (performance.now), server on SQLite in the
// same process. Pinned to one core by `taskset` when available (see package.json).

const FLAGS = Number(process.env.BENCH_FLAGS ?? 1000);
const ROUNDS = 5;

async function main() {
  const web = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-web-'));
  await buildDashboard(web);
  const port = 23_000 + Math.floor(Math.random() * 1000);
  const base = `http://127.0.0.1:${port}`;
  const ctx = await createTestContext('sqlite', { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: web });
  await ctx.app.listen({ port, host: '127.0.0.1' });
  const project = (await ctx.admin('POST', '/admin/v1/projects', { name: 'Big' })).json() as { key: string };
  for (let i = 0; i < FLAGS; i++) {
    await ctx.admin('POST', `/admin/v1/projects/${project.key}/flags`, {
      slug: `flag-${String(i).padStart(4, '0')}`,
      description: `Flag number ${i}`,
      enabled: i % 2 === 0,
    });
  }
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${base}/sign-in`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    const last = `flag-${String(FLAGS - 1).padStart(4, '0')} in production`;
    const loads: number[] = [];
    const renders: number[] = [];
    const searches: number[] = [];
    const toggles: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const started = Date.now();
      await page.goto(`${base}/projects/${project.key}`);
      await page.getByRole('switch', { name: last }).waitFor();
      loads.push(Date.now() - started);
      // Back and forth within the app: the flags are in the query cache, so this is the render alone.
      await page.getByRole('link', { name: 'Projects', exact: true }).first().click();
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      // Timed in the page, to the frame after the last switch exists (Playwright's role queries over
      // 3,000 switches would cost more than the render).
      renders.push(
        await page.evaluate(async (name) => {
          const link = [...document.querySelectorAll('a')].find((a) => a.textContent === 'Big')!;
          const t0 = performance.now();
          link.click();
          while (!document.querySelector(`[aria-label="${name}"]`)) await new Promise((r) => requestAnimationFrame(r));
          await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
          return performance.now() - t0;
        }, last),
      );
      // A keystroke that narrows the table to one row, then clears it again: in-page time to the next frame.
      searches.push(
        await page.evaluate(async () => {
          const input = [...document.querySelectorAll('input')].find((i) => i.labels?.[0]?.textContent?.includes('Search flags'))!;
          const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
          const t0 = performance.now();
          setter.call(input, 'flag-0999');
          input.dispatchEvent(new Event('input', { bubbles: true }));
          await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
          setter.call(input, '');
          input.dispatchEvent(new Event('input', { bubbles: true }));
          await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
          return performance.now() - t0;
        }),
      );
      const toggle = page.getByRole('switch', { name: 'flag-0500 in staging' });
      const before = await toggle.getAttribute('aria-checked');
      const t0 = Date.now();
      await toggle.click();
      await page.waitForFunction(
        ([name, was]) => document.querySelector(`[aria-label="${name}"]`)?.getAttribute('aria-checked') !== was,
        ['flag-0500 in staging', before],
      );
      toggles.push(Date.now() - t0);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(`dashboard, ${FLAGS} flags x 3 environments, ${ROUNDS} rounds (median, ms):`);
    console.log(`  open the flags screen until the last switch shows: ${median(loads)} (all: ${loads.join(', ')})`);
    console.log(`  render it again from cached data (in-app link):   ${median(renders).toFixed(0)} (all: ${renders.map((r) => r.toFixed(0)).join(', ')})`);
    console.log(`  search keystroke and clear, both rendered:          ${median(searches).toFixed(0)} (all: ${searches.map((s) => s.toFixed(0)).join(', ')})`);
    console.log(`  toggle a switch until the server's answer shows:   ${median(toggles)} (all: ${toggles.join(', ')})`);
  } finally {
    await browser.close();
    await ctx.close();
    fs.rmSync(web, { recursive: true, force: true });
  }
}

await main();
