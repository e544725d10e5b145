import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Page, chromium } from 'playwright-core';
import { buildDashboard } from '../dashboard/build.ts';
import { ADMIN_TOKEN, createTestContext, startInstance } from '../test/support/context.ts';

// npm run bench:dashboard (issue 9, issue 22): how long headless Chromium takes to show the flags table
// of a project with 1,000 flags in 3 environments (3,000 switches), and to re-render it from cached data,
// on a search keystroke and on a toggle. Times are measured in the page (performance.now, to the painted
// frame that shows the outcome), server on SQLite in the same process.
//
// Baseline in the same run: the dashboard as built from BENCH_BASELINE_REF (default efde0e6, the dashboard
// before issue 22, which issue 22's done-when compares with; taken with `git archive` and built with this
// checkout's node_modules) and this checkout's are served by two instances started alike on the same
// database. For a fair comparison (identical code gives ratios near 1.00; docs/performance.md): the
// flags are made through a third instance, one uncounted warm-up round per side,
// then rounds whose order alternates (AB, BA, ...); before each measurement the page has no request under
// way, two idle periods and a full GC; the search waits for its render however the screen defers it.
// BENCH_BASELINE_REF=none measures this checkout alone; BENCH_BASELINE_REF=HEAD checks the fairness.

const FLAGS = Number(process.env.BENCH_FLAGS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const BASELINE = 'efde0e6';
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/** The baseline's dashboard, built into a temporary folder, or undefined. */
async function baselineWeb(): Promise<string | undefined> {
  const ref = process.env.BENCH_BASELINE_REF ?? BASELINE;
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

const LAST = `flag-${String(FLAGS - 1).padStart(4, '0')} in production`;
const TOGGLED = `flag-${String(Math.floor(FLAGS / 2)).padStart(4, '0')} in staging`;

/**
 * Installed in every page before its own scripts: from the navigation's start (performance.now() is 0
 * there), polls each frame for the last switch and records the time of the first painted frame that has
 * it. Measuring in the page, not with Playwright's role queries from Node, keeps the driver's polling
 * (3,000 accessible names) out of the figure.
 */
// A string, not a function: tsx's transform names functions with a helper (__name) that the page lacks;
// the page gets a stand-in for the functions that page.evaluate sends. The fetch wrapper notes when a
// PATCH's answer arrived (the toggle's "answered"), the same for both builds.
const WATCH_FIRST_SHOW = `globalThis.__name = (f) => f;
{
  const fetch = window.fetch;
  window.fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (init?.method === 'PATCH') window.__answered = performance.now();
    return res;
  };
}
window.__frame = (since) => {
  if (performance.now() - since > 30000) throw new Error('bench: nothing changed on screen for 30 s');
  return new Promise((r) => requestAnimationFrame(r));
};
{
  const look = () => {
    if (document.querySelector(${JSON.stringify(`[aria-label="${LAST}"]`)}))
      requestAnimationFrame(() => setTimeout(() => (window.__shown = performance.now()), 0));
    else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}`;

/**
 * Waits until the page has nothing left to do: no request of the page under way (a write's refetch, say),
 * then two idle periods of the renderer, then a full garbage collection. Each side's measurement starts
 * from the same quiet state, whatever the other side (or this side's previous step) left behind.
 */
async function settle(page: Page, inFlight: { count: number }): Promise<void> {
  for (let i = 0; i < 200 && inFlight.count > 0; i++) await new Promise((r) => setTimeout(r, 25));
  await page.evaluate(async () => {
    for (let i = 0; i < 2; i++) await new Promise((r) => requestIdleCallback(r, { timeout: 1000 }));
    (globalThis as unknown as { gc?: () => void }).gc?.();
  });
}

async function round(page: Page, inFlight: { count: number }, base: string, projectKey: string, times: Times): Promise<void> {
  await settle(page, inFlight);
  await page.goto(`${base}/projects/${projectKey}`);
  times.loads.push(await page.waitForFunction(() => (window as unknown as { __shown?: number }).__shown).then((h) => h.jsonValue() as Promise<number>));
  // Back and forth within the app: the flags are in the query cache, so this is the render alone.
  await page.getByRole('link', { name: 'Projects', exact: true }).first().click();
  await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
  await settle(page, inFlight);
  // Timed in the page, to the painted frame after the last switch exists.
  times.renders.push(
    await page.evaluate(async (name) => {
      const link = [...document.querySelectorAll('main a')].find((a) => a.textContent === 'Big') as HTMLAnchorElement;
      const t0 = performance.now();
      link.click();
      while (!document.querySelector(`[aria-label="${name}"]`)) await (window as unknown as { __frame: (since: number) => Promise<void> }).__frame(t0);
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      return performance.now() - t0;
    }, LAST),
  );
  await settle(page, inFlight);
  // A keystroke that narrows the table to one row, then clearing it: each until the painted frame that
  // shows its outcome (one row; all rows again), however the screen schedules the render.
  times.searches.push(
    await page.evaluate(async (last) => {
      const input = [...document.querySelectorAll('input')].find((i) => i.labels?.[0]?.textContent?.includes('Search flags'))!;
      const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
      const frame = () => (window as unknown as { __frame: (since: number) => Promise<void> }).__frame(t0);
      const rows = () => document.querySelectorAll('table.flags tbody tr').length;
      const t0 = performance.now();
      setter.call(input, last.split(' in ')[0]!);
      input.dispatchEvent(new Event('input', { bubbles: true }));
      while (rows() !== 1) await frame();
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      setter.call(input, '');
      input.dispatchEvent(new Event('input', { bubbles: true }));
      while (rows() < 2 || !document.querySelector(`[aria-label="${last}"]`)) await frame();
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      return performance.now() - t0;
    }, LAST),
  );
  await settle(page, inFlight);
  // A toggle until the switch shows the new state (painted) and the server's answer to the PATCH arrived.
  times.toggles.push(
    await page.evaluate(async (name) => {
      const button = () => document.querySelector(`[aria-label="${name}"]`)!;
      const before = button().getAttribute('aria-checked');
      const t0 = performance.now();
      const w = window as unknown as { __answered?: number };
      w.__answered = undefined;
      (button() as HTMLButtonElement).click();
      while (button().getAttribute('aria-checked') === before) await (window as unknown as { __frame: (since: number) => Promise<void> }).__frame(t0);
      const shown = await new Promise<number>((r) => requestAnimationFrame(() => setTimeout(() => r(performance.now()), 0)));
      while (w.__answered === undefined) await (window as unknown as { __frame: (since: number) => Promise<void> }).__frame(t0);
      return Math.max(shown, w.__answered) - t0;
    }, TOGGLED),
  );
}

async function main() {
  const web = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-web-'));
  await buildDashboard(web);
  const baseline = await baselineWeb();
  const port = 23_000 + Math.floor(Math.random() * 1000);
  // The flags are made through an instance that serves neither side; then one instance per build, both
  // started the same way on the same database, with the same history (the one that made the flags would
  // otherwise have its caches and compiled paths warm).
  const ctx = await createTestContext('sqlite', { FLAGPOST_RATE_LIMIT_MAX: '0' });
  const project = (await ctx.admin('POST', '/admin/v1/projects', { name: 'Big' })).json() as { key: string };
  for (let i = 0; i < FLAGS; i++) {
    await ctx.admin('POST', `/admin/v1/projects/${project.key}/flags`, {
      slug: `flag-${String(i).padStart(4, '0')}`,
      description: `Flag number ${i}`,
      enabled: i % 2 === 0,
    });
  }
  const servers: Array<Awaited<ReturnType<typeof startInstance>>> = [];
  for (const [i, dir] of [web, ...(baseline ? [baseline] : [])].entries()) {
    const server = await startInstance(ctx.database, {
      FLAGPOST_PUBLIC_URL: `http://127.0.0.1:${port + i}`,
      FLAGPOST_DASHBOARD_DIR: dir,
      FLAGPOST_RATE_LIMIT_MAX: '0',
    });
    await server.app.listen({ port: port + i, host: '127.0.0.1' });
    servers.push(server);
  }
  // --expose-gc: each measurement starts after a full collection (settle), so neither side pays for the
  // other's or its own earlier garbage.
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--js-flags=--expose-gc'],
  });
  try {
    const runs = [{ name: 'this checkout', base: `http://127.0.0.1:${port}`, times: { loads: [], renders: [], searches: [], toggles: [] } as Times }];
    if (baseline)
      runs.push({
        name: `baseline (${process.env.BENCH_BASELINE_REF ?? BASELINE})`,
        base: `http://127.0.0.1:${port + 1}`,
        times: { loads: [], renders: [], searches: [], toggles: [] },
      });
    const pages: Array<{ page: Page; inFlight: { count: number } }> = [];
    for (const run of runs) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await context.addInitScript(WATCH_FIRST_SHOW);
      const page = await context.newPage();
      const inFlight = { count: 0 };
      page.on('request', () => inFlight.count++);
      page.on('requestfinished', () => inFlight.count--);
      page.on('requestfailed', () => inFlight.count--);
      await page.goto(`${run.base}/sign-in`);
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      pages.push({ page, inFlight });
    }
    // One round each, not counted, so that neither side pays alone for the server's and the browser's
    // first time (JIT, SQLite's page cache, the HTTP cache): both servers run in this process and share
    // their compiled code, so the first to ask would otherwise warm it for the other.
    for (const [i, run] of runs.entries())
      await round(pages[i]!.page, pages[i]!.inFlight, run.base, project.key, { loads: [], renders: [], searches: [], toggles: [] });
    // The order within a round alternates (AB, BA, AB, ...), so neither side always follows the other.
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? [...runs.keys()] : [...runs.keys()].reverse();
      for (const i of order) await round(pages[i]!.page, pages[i]!.inFlight, runs[i]!.base, project.key, runs[i]!.times);
    }
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)]!;
    const spread = (xs: number[]) => `${sorted(xs)[0]!.toFixed(0)}-${sorted(xs).at(-1)!.toFixed(0)}`;
    const rows: Array<[string, keyof Times]> = [
      ['open the flags screen until the last switch shows', 'loads'],
      ['render it again from cached data (in-app link)', 'renders'],
      ['search keystroke and clear, both rendered', 'searches'],
      ['toggle a switch until shown and answered', 'toggles'],
    ];
    console.log(
      `dashboard, ${FLAGS} flags x 3 environments, ${ROUNDS} rounds alternating ${runs.length > 1 ? `with ${runs[1]!.name} ` : ''}` +
        `(median ms, min-max; load ${os.loadavg()[0]!.toFixed(1)}):`,
    );
    for (const [label, key] of rows) {
      const mine = runs[0]!.times[key];
      const line = `  ${label.padEnd(52)} ${median(mine).toFixed(0).padStart(6)} (${spread(mine)})`;
      if (runs[1]) {
        const theirs = runs[1].times[key];
        // Also the median of the rounds' own ratios: a round's two sides ran back to back, under the same load.
        const paired = median(mine.map((m, r) => m / theirs[r]!));
        console.log(
          `${line.padEnd(76)} baseline ${median(theirs).toFixed(0).padStart(6)} (${spread(theirs)})  ratio ${(median(mine) / median(theirs)).toFixed(2)}` +
            ` (paired ${paired.toFixed(2)})`,
        );
      } else console.log(line);
    }
  } finally {
    await browser.close();
    for (const server of servers) {
      await server.app.close();
      await server.services.stop();
      await server.handle.close();
    }
    await ctx.close();
    fs.rmSync(web, { recursive: true, force: true });
    if (baseline) fs.rmSync(baseline, { recursive: true, force: true });
  }
}

await main();
