import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { build } from 'esbuild';
import type { BrowserContext } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createTestContext, type TestContext } from '../support/context.ts';
import { createFlag, createProject, type ProjectFixture } from '../support/fixtures.ts';
import { freePort, ROOT } from '../support/process.ts';

// Issue 10: the published OpenFeature web SDK with the OFREP web provider, in headless Chromium, on a
// page of another origin than Flagpost. It evaluates a flag and its payload, then receives a change
// through the event stream advertised by the bulk answer and evaluates again, without polling.

/** The page's script: the SDK and provider bundled by esbuild from the pinned packages. */
const APP = `
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
const config = window.flagpost;
const out = document.getElementById('out');
const show = () => {
  const client = OpenFeature.getClient();
  out.textContent = JSON.stringify({
    checkout: client.getBooleanValue('checkout', false),
    killSwitch: client.getBooleanValue('kill-switch', true),
    payload: client.getObjectValue('checkout:payload', {}),
  });
};
OpenFeature.addHandler(ProviderEvents.ConfigurationChanged, () => {
  window.changes = (window.changes ?? 0) + 1;
  show();
});
await OpenFeature.setProviderAndWait(new OFREPWebProvider({
  baseUrl: config.baseUrl,
  headers: [['x-project-key', config.projectKey], ['x-environment-key', config.environmentKey]],
  changeDetection: 'sse',
  cacheMode: 'disabled',
  disableVisibilityRefresh: true,
}));
show();
`;

describe('OFREP web provider in headless Chromium', { skip: chromiumMissing }, () => {
  let ctx: TestContext;
  let flagpost: string;
  let site: http.Server;
  let siteUrl: string;
  let project: ProjectFixture;
  let browser: BrowserContext;

  before(async () => {
    const port = freePort();
    flagpost = `http://127.0.0.1:${port}`;
    ctx = await createTestContext('sqlite');
    await ctx.app.listen({ port, host: '127.0.0.1' });
    project = await createProject(ctx);
    await createFlag(ctx, project.key, { slug: 'checkout', enabled: false, payload: { variant: 'a' } });
    await createFlag(ctx, project.key, { slug: 'kill-switch', enabled: false });

    const bundle = await build({
      stdin: { contents: APP, resolveDir: ROOT, loader: 'js' },
      bundle: true,
      format: 'esm',
      target: 'chrome120',
      write: false,
      logLevel: 'silent',
    });
    const script = bundle.outputFiles[0]!.text;
    const config = JSON.stringify({ baseUrl: flagpost, projectKey: project.key, environmentKey: project.environments[0]!.key });
    site = http.createServer((req, res) => {
      if (req.url === '/app.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<!doctype html><html><head><title>Shop</title></head><body><pre id="out">loading</pre><script>window.flagpost = ${config};</script><script type="module" src="/app.js"></script></body></html>`,
        );
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}/`;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
    await ctx?.close();
  });

  it('evaluates from another origin and re-evaluates when a change arrives on the event stream', { timeout: 60_000 }, async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    const requests: string[] = [];
    page.on('request', (r) => requests.push(`${r.method()} ${new URL(r.url()).pathname}`));
    await page.goto(siteUrl);
    const read = async () => JSON.parse((await page.textContent('#out'))!) as { checkout: boolean; killSwitch: boolean; payload: unknown };
    await page.waitForFunction(() => document.getElementById('out')!.textContent !== 'loading');
    assert.deepEqual(await read(), { checkout: false, killSwitch: false, payload: { variant: 'a' } });
    // The provider connects to the advertised stream.
    for (let i = 0; i < 100 && ctx.services.streams.size === 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(ctx.services.streams.size, 1, `requests: ${requests.join(', ')}; ${errors.join('; ')}`);
    assert.ok(requests.includes('GET /ofrep/v1/events'));
    const envKey = project.environments[0]!.key;
    const changed = await ctx.admin('PATCH', `/admin/v1/projects/${project.key}/environments/${envKey}/flags/checkout`, {
      enabled: true,
      payload: { variant: 'b' },
    });
    assert.equal(changed.statusCode, 200);
    await page.waitForFunction(() => JSON.parse(document.getElementById('out')!.textContent!).checkout === true, undefined, { timeout: 10_000 });
    assert.deepEqual(await read(), { checkout: true, killSwitch: false, payload: { variant: 'b' } });
    assert.ok((await page.evaluate(() => (window as unknown as { changes?: number }).changes ?? 0)) >= 1);
    const bulkFetches = requests.filter((r) => r === 'POST /ofrep/v1/evaluate/flags').length;
    assert.ok(bulkFetches >= 2 && bulkFetches <= 4, `bulk evaluations: ${bulkFetches} (one at start, one per change; no polling)`);
    assert.deepEqual(errors, []);
  });
});
