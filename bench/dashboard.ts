import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Page, chromium } from 'playwright-core';
import { buildDashboard } from '../dashboard/build.ts';
import { ADMIN_TOKEN, createTestContext, startInstance } from '../test/support/context.ts';

// npm run bench:dashboard (issue 9, issue 22): how long headless Chromium takes to show the flags table
// of a project with 1,000 flags in 3 environments (3,000 switches), and to re-render it from cached data,
// on a search keystroke and on a toggle. Times are measured in the page (performance.now), server on
// SQLite in the same process.
//
// Baseline in the same run: the dashboard as built from BENCH_BASELINE_REF (default `main`, taken with
// `git archive` and built with this checkout's node_modules) is served by a second instance on the same
// database, and the rounds alternate between the two, so that the machine's load falls on both alike.
// BENCH_BASELINE_REF=none measures this checkout alone.

const FLAGS = Number(process.env.BENCH_FLAGS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/** The baseline's dashboard, built into a temporary folder, or undefined. */
async function baselineWeb(): Promise<string | undefined> {
  const ref = process.env.BENCH_BASELINE_REF ?? 'main';
  if (ref === 'none') return undefined;
  const src = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-baseline-src-'));
  const archive = execFileSync('git', ['-C', ROOT, 'archive', ref, 'dashboard'], { maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', src], { input: archive });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(src, 'node_modules'));
  fs.writeFileSync(path.join(src, 'package.json'), '{"type":"module"}\n');
  const web = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-baseline-web-'));
  execFileSync(process.execPath, ['--import', 'tsx', path.join(src, 'dashboard', 'build.ts'), web], { cwd: ROOT, stdio: 'inherit' });
  fs.rmSync(src, { recursive: true, force: true });
  return web;
}

interface Times {
  loads: number[];
  renders: number[];
  searches: number[];
  toggles: number[];
}

async function round(page: Page, base: string, projectKey: string, times: Times): Promise<void> {
  const last = `flag-${String(FLAGS - 1).padStart(4, '0')} in production`;
  const started = Date.now();
  await page.goto(`${base}/projects/${projectKey}`);
  await page.getByRole('switch', { name: last }).waitFor();
  times.loads.push(Date.now() - started);
  // Back and forth within the app: the flags are in the query cache, so this is the render alone.
  await page.getByRole('link', { name: 'Projects', exact: true }).first().click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
  // Timed in the page, to the frame after the last switch exists (Playwright's role queries over
  // 3,000 switches would cost more than the render).
  times.renders.push(
    await page.evaluate(async (name) => {
      const link = [...document.querySelectorAll('main a')].find((a) => a.textContent === 'Big') as HTMLAnchorElement;
      const t0 = performance.now();
      link.click();
      while (!document.querySelector(`[aria-label="${name}"]`)) await new Promise((r) => requestAnimationFrame(r));
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      return performance.now() - t0;
    }, last),
  );
  // A keystroke that narrows the table to one row, then clears it again: in-page time to the next frame.
  times.searches.push(
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
  // A toggle until the switch shows the new state and the server has answered.
  const toggle = page.getByRole('switch', { name: 'flag-0500 in staging' });
  const before = await toggle.getAttribute('aria-checked');
  const answered = page.waitForResponse((r) => r.request().method() === 'PATCH');
  const t0 = Date.now();
  await toggle.click();
  await page.waitForFunction(
    ([name, was]) => document.querySelector(`[aria-label="${name}"]`)?.getAttribute('aria-checked') !== was,
    ['flag-0500 in staging', before],
  );
  await answered;
  times.toggles.push(Date.now() - t0);
}

async function main() {
  const web = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-web-'));
  await buildDashboard(web);
  const baseline = await baselineWeb();
  const port = 23_000 + Math.floor(Math.random() * 1000);
  const base = `http://127.0.0.1:${port}`;
  const ctx = await createTestContext('sqlite', { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: web, FLAGPOST_RATE_LIMIT_MAX: '0' });
  await ctx.app.listen({ port, host: '127.0.0.1' });
  const project = (await ctx.admin('POST', '/admin/v1/projects', { name: 'Big' })).json() as { key: string };
  for (let i = 0; i < FLAGS; i++) {
    await ctx.admin('POST', `/admin/v1/projects/${project.key}/flags`, {
      slug: `flag-${String(i).padStart(4, '0')}`,
      description: `Flag number ${i}`,
      enabled: i % 2 === 0,
    });
  }
  // The baseline: a second instance on the same database, serving the other build.
  const other = baseline
    ? await startInstance(ctx.database, { FLAGPOST_PUBLIC_URL: `http://127.0.0.1:${port + 1}`, FLAGPOST_DASHBOARD_DIR: baseline, FLAGPOST_RATE_LIMIT_MAX: '0' })
    : undefined;
  if (other) await other.app.listen({ port: port + 1, host: '127.0.0.1' });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const runs = [{ name: 'this checkout', base, times: { loads: [], renders: [], searches: [], toggles: [] } as Times }];
    if (other)
      runs.push({
        name: `baseline (${process.env.BENCH_BASELINE_REF ?? 'main'})`,
        base: `http://127.0.0.1:${port + 1}`,
        times: { loads: [], renders: [], searches: [], toggles: [] },
      });
    const pages: Page[] = [];
    for (const run of runs) {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      await page.goto(`${run.base}/sign-in`);
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      pages.push(page);
    }
    for (let r = 0; r < ROUNDS; r++) for (const [i, run] of runs.entries()) await round(pages[i]!, run.base, project.key, run.times);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const rows: Array<[string, keyof Times]> = [
      ['open the flags screen until the last switch shows', 'loads'],
      ['render it again from cached data (in-app link)', 'renders'],
      ['search keystroke and clear, both rendered', 'searches'],
      ['toggle a switch until shown and answered', 'toggles'],
    ];
    console.log(`dashboard, ${FLAGS} flags x 3 environments, ${ROUNDS} rounds alternating (median ms; load ${os.loadavg()[0]!.toFixed(1)}):`);
    for (const [label, key] of rows) {
      const mine = median(runs[0]!.times[key]);
      const line = `  ${label.padEnd(52)} ${mine.toFixed(0).padStart(6)}`;
      if (runs[1]) {
        const theirs = median(runs[1].times[key]);
        console.log(`${line}  baseline ${theirs.toFixed(0).padStart(6)}  ratio ${(mine / theirs).toFixed(2)}`);
      } else console.log(line);
    }
  } finally {
    await browser.close();
    if (other) {
      await other.app.close();
      await other.services.stop();
      await other.handle.close();
    }
    await ctx.close();
    fs.rmSync(web, { recursive: true, force: true });
    if (baseline) fs.rmSync(baseline, { recursive: true, force: true });
  }
}

await main();
