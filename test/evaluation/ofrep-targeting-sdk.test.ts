import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OpenFeature } from '@openfeature/server-sdk';
import { build } from 'esbuild';
import type { BrowserContext } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createTestContext, forEachDialect, type TestContext } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';
import { freePort, ROOT } from '../support/process.ts';

// Issue 18: the published OpenFeature SDKs get per-user answers through OFREP. The server SDK with the
// OFREP provider sends each call's context; the web SDK with the OFREP web provider (in Chromium)
// evaluates again when the page changes its context.

const rolloutRules = [
  {
    id: 'rollout',
    name: 'Half',
    conditions: [],
    serve: {
      split: {
        weights: [
          { variant: 'on', weight: 50 },
          { variant: 'off', weight: 50 },
        ],
      },
    },
  },
];
const countryRules = [{ id: 'de', name: 'Germany', conditions: [{ attribute: 'country', operator: 'equals', values: ['DE'] }], serve: { variant: 'on' } }];

async function setRules(ctx: TestContext, project: ProjectFixture, slug: string, body: unknown) {
  const res = await ctx.admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/${slug}`, body);
  assert.equal(res.statusCode, 200, res.body);
}

forEachDialect('the OpenFeature server SDK with the OFREP provider, per user', (ctx) => {
  let project: ProjectFixture;

  before(async () => {
    project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'new-checkout', enabled: false });
    await setRules(ctx(), project, 'new-checkout', { rules: rolloutRules });
    await createFlag(ctx(), project.key, { slug: 'theme', type: 'string', variants: { light: 'light', dark: 'dark' }, defaultVariant: 'light' });
    await setRules(ctx(), project, 'theme', { state: 'ENABLED', rules: [{ ...countryRules[0], serve: { variant: 'dark' } }] });
  });

  it('gives two users in one rollout different variants, each the same on every call', async () => {
    const port = freePort();
    await ctx().app.listen({ port, host: '127.0.0.1' });
    const domain = `targeting-${ctx().dialect}`;
    await OpenFeature.setProviderAndWait(
      domain,
      new OFREPProvider({ baseUrl: `http://127.0.0.1:${port}`, headers: [...Object.entries(keys(project))] as Array<[string, string]> }),
    );
    const client = OpenFeature.getClient(domain);
    const variants = new Map<string, string>();
    for (let i = 0; i < 30 && new Set(variants.values()).size < 2; i++) {
      const details = await client.getBooleanDetails('new-checkout', false, { targetingKey: `user-${i}` });
      assert.equal(details.reason, 'SPLIT');
      assert.equal(details.errorCode, undefined);
      assert.equal(details.value, details.variant === 'on');
      assert.equal(details.flagMetadata.ruleId, 'rollout');
      variants.set(`user-${i}`, details.variant!);
    }
    assert.equal(new Set(variants.values()).size, 2, 'two users see different variants');
    for (const [user, variant] of variants) {
      assert.equal((await client.getBooleanDetails('new-checkout', false, { targetingKey: user })).variant, variant, 'sticky');
    }
    assert.equal(await client.getStringValue('theme', 'none', { targetingKey: 'a', country: 'DE' }), 'dark');
    assert.equal(await client.getStringValue('theme', 'none', { targetingKey: 'a', country: 'US' }), 'light');
    await OpenFeature.clearProviders();
  });
});

/** The page's script: the web SDK and provider bundled by esbuild from the pinned packages. */
const APP = `
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
const config = window.flagpost;
const out = document.getElementById('out');
const show = () => {
  const client = OpenFeature.getClient();
  const details = client.getBooleanDetails('checkout', false);
  out.textContent = JSON.stringify({ value: details.value, reason: details.reason, variant: details.variant });
};
// The provider answers from its local cache (per targetingKey) first and tells when the server's
// answer for the new context differs.
OpenFeature.addHandler(ProviderEvents.ConfigurationChanged, show);
window.setCountry = async (country) => {
  await OpenFeature.setContext({ targetingKey: 'user-1', country });
  show();
};
await OpenFeature.setContext({ targetingKey: 'user-1', country: 'US' });
await OpenFeature.setProviderAndWait(new OFREPWebProvider({
  baseUrl: config.baseUrl,
  headers: [['x-project-key', config.projectKey], ['x-environment-key', config.environmentKey]],
  changeDetection: 'sse',
  disableVisibilityRefresh: true,
}));
show();
`;

describe('the OpenFeature web SDK with the OFREP web provider, per context, in Chromium', { skip: chromiumMissing }, () => {
  let ctx: TestContext;
  let site: http.Server;
  let siteUrl: string;
  let browser: BrowserContext;

  before(async () => {
    const port = freePort();
    ctx = await createTestContext('sqlite');
    await ctx.app.listen({ port, host: '127.0.0.1' });
    const project = await createProject(ctx);
    await createFlag(ctx, project.key, { slug: 'checkout', enabled: false });
    await setRules(ctx, project, 'checkout', { rules: countryRules });
    const bundle = await build({
      stdin: { contents: APP, resolveDir: ROOT, loader: 'js' },
      bundle: true,
      format: 'esm',
      target: 'chrome120',
      write: false,
      logLevel: 'silent',
    });
    const config = JSON.stringify({ baseUrl: `http://127.0.0.1:${port}`, projectKey: project.key, environmentKey: project.environments[0]!.key });
    site = http.createServer((req, res) => {
      if (req.url === '/app.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle.outputFiles[0]!.text);
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

  it("changes the browser's answer when the page changes an attribute a rule reads (no 304 from the cached ETag)", { timeout: 60_000 }, async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const statuses: number[] = [];
    page.on('response', (r) => {
      if (r.url().endsWith('/ofrep/v1/evaluate/flags')) statuses.push(r.status());
    });
    await page.goto(siteUrl);
    await page.waitForFunction(() => document.getElementById('out')!.textContent !== 'loading');
    const read = async () => JSON.parse((await page.textContent('#out'))!) as { value: boolean; reason: string; variant: string };
    assert.deepEqual(await read(), { value: false, reason: 'DEFAULT', variant: 'off' });
    const answered = (value: boolean) =>
      page.waitForFunction((v) => JSON.parse(document.getElementById('out')!.textContent!).value === v, value, { timeout: 10_000 });
    await page.evaluate(() => (window as unknown as { setCountry(c: string): Promise<void> }).setCountry('DE'));
    await answered(true);
    assert.equal((await read()).variant, 'on');
    await page.evaluate(() => (window as unknown as { setCountry(c: string): Promise<void> }).setCountry('US'));
    await answered(false);
    assert.equal((await read()).variant, 'off');
    assert.ok(statuses.length >= 3, `bulk evaluations: ${statuses.join(',')}`);
    assert.ok(!statuses.includes(304), `no 304 for another context: ${statuses.join(',')}`);
    assert.deepEqual(errors, []);
  });
});

after(async () => {
  await OpenFeature.close();
});

// Issue 31 item 7: a flag switched off entirely answers 200 `{"key","reason":"DISABLED","metadata":{}}` (no
// value), OFREP's answer for a disabled flag. The OFREP provider the registry serves (0.1.3) predates that
// answer and reports it as an error; the caller gets its default either way. docs/api.md says so, and this
// test keeps the note true: when a newer provider reports DISABLED, it fails and the note is updated.
forEachDialect('a DISABLED flag through the published OFREP provider', (ctx) => {
  it('gives the caller its default, reported by @openfeature/ofrep-provider 0.1.3 as ERROR/GENERAL', async () => {
    const project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'banner', type: 'string', variants: { a: 'a', b: 'b' }, defaultVariant: 'a' });
    await setRules(ctx(), project, 'banner', { state: 'DISABLED' });
    const raw = await ctx().app.inject({
      method: 'POST',
      url: '/ofrep/v1/evaluate/flags/banner',
      headers: { ...keys(project), 'content-type': 'application/json' },
      payload: { context: { targetingKey: 'u1' } },
    });
    assert.equal(raw.statusCode, 200);
    assert.deepEqual(raw.json(), { key: 'banner', reason: 'DISABLED', metadata: {} });

    const port = freePort();
    await ctx().app.listen({ port, host: '127.0.0.1' });
    const domain = `disabled-${ctx().dialect}`;
    await OpenFeature.setProviderAndWait(
      domain,
      new OFREPProvider({ baseUrl: `http://127.0.0.1:${port}`, headers: [...Object.entries(keys(project))] as Array<[string, string]> }),
    );
    const details = await OpenFeature.getClient(domain).getStringDetails('banner', 'fallback', { targetingKey: 'u1' });
    assert.equal(details.value, 'fallback', 'the caller gets its default');
    assert.equal(details.reason, 'ERROR');
    assert.equal(details.errorCode, 'GENERAL');
    await OpenFeature.clearProviders();
  });
});
