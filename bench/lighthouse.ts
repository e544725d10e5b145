import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import lighthouse from 'lighthouse';
import { chromium } from 'playwright-core';
import { buildDashboard } from '../dashboard/build.ts';
import { ADMIN_TOKEN, createTestContext } from '../test/support/context.ts';

// npm run bench:lighthouse (issue 22): Lighthouse with Debian's Chromium on the flag list of a project
// with 1,000 flags × 3 environments, signed in. Prints the accessibility and best-practices scores
// (target: at least 95 each) and the first load's size gzip-compressed as the build ships it (target:
// under 150 KB). A script, not a test: it takes minutes on a busy machine.

const FLAGS = Number(process.env.BENCH_FLAGS ?? 1000);

async function main() {
  const web = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-lighthouse-web-'));
  await buildDashboard(web);
  const port = 24_000 + Math.floor(Math.random() * 1000);
  const base = `http://127.0.0.1:${port}`;
  const ctx = await createTestContext('sqlite', { FLAGPOST_PUBLIC_URL: base, FLAGPOST_DASHBOARD_DIR: web, FLAGPOST_RATE_LIMIT_MAX: '0' });
  await ctx.app.listen({ port, host: '127.0.0.1' });
  const project = (await ctx.admin('POST', '/admin/v1/projects', { name: 'Big' })).json() as { key: string };
  for (let i = 0; i < FLAGS; i++)
    await ctx.admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: `flag-${String(i).padStart(4, '0')}`, description: `Flag number ${i}` });

  // The first load: index.html and what it references, and what the entry imports statically.
  const html = fs.readFileSync(path.join(web, 'index.html'), 'utf8');
  const first = new Set([...html.matchAll(/(?:src|href)="\/assets\/([^"]+)"/g)].map((m) => m[1]!));
  for (const ref of [...first].filter((r) => r.endsWith('.js'))) {
    const code = fs.readFileSync(path.join(web, 'assets', ref), 'utf8');
    for (const m of code.matchAll(/(?:^|[;}\s])import\s*(?:[\w{}*,\s$]+from\s*)?["']\.\/([^"']+\.js)["']/g)) first.add(m[1]!);
  }
  let bytes = gzipSync(html).length;
  for (const file of first) bytes += gzipSync(fs.readFileSync(path.join(web, 'assets', file))).length;

  const debugPort = 25_000 + Math.floor(Math.random() * 1000);
  // A persistent context is the browser's default one, which the page Lighthouse opens shares: signed in
  // once here, it is signed in there.
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-lighthouse-profile-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', `--remote-debugging-port=${debugPort}`, '--disable-background-networking', '--disable-component-update'],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`${base}/sign-in`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    const result = await lighthouse(
      `${base}/projects/${project.key}`,
      { port: debugPort, output: 'json', logLevel: 'error', onlyCategories: ['accessibility', 'best-practices', 'performance'], disableStorageReset: true },
      {
        extends: 'lighthouse:default',
        settings: {
          formFactor: 'desktop',
          screenEmulation: { mobile: false, width: 1280, height: 900, deviceScaleFactor: 1, disabled: false },
          throttlingMethod: 'provided',
        },
      },
    );
    const lhr = result!.lhr;
    const dom = lhr.audits['dom-size']?.numericValue ?? 0;
    if (new URL(lhr.finalDisplayedUrl).pathname !== `/projects/${project.key}` || dom < FLAGS * 3) {
      throw new Error(`Lighthouse did not audit the flag list: ${lhr.finalDisplayedUrl}, ${dom} DOM elements`);
    }
    const categories = lhr.categories;
    const score = (key: string) => Math.round((categories[key]?.score ?? 0) * 100);
    console.log(`lighthouse on the flag list, ${FLAGS} flags x 3 environments (Debian Chromium, desktop, no throttling):`);
    console.log(`  accessibility:  ${score('accessibility')} (target >= 95)`);
    console.log(`  best practices: ${score('best-practices')} (target >= 95)`);
    console.log(`  performance:    ${score('performance')} (measured on this machine, for reference)`);
    console.log(`  first load:     ${(bytes / 1024).toFixed(1)} KB gzip (target < 150 KB)`);
    console.log(`  audited:        ${lhr.finalDisplayedUrl} (${dom} DOM elements; load average ${os.loadavg()[0]!.toFixed(1)})`);
    for (const key of ['accessibility', 'best-practices']) {
      for (const ref of categories[key]?.auditRefs ?? []) {
        const audit = result!.lhr.audits[ref.id];
        if (ref.weight > 0 && audit && audit.score !== null && audit.score < 1) console.log(`  - ${key}: ${audit.id}: ${audit.title}`);
      }
    }
  } finally {
    await browser.close();
    await ctx.close();
    fs.rmSync(web, { recursive: true, force: true });
    fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }
}

await main();
