import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { createTestContext, type TestContext } from '../support/context.ts';
import { DASHBOARD_CSP } from '../../src/dashboard/index.ts';

// Issue 9: the dashboard is served by the server itself. Every client route answers index.html, never
// cached; assets have hashed names and are cached for a year, pre-compressed variants are chosen by
// Accept-Encoding; every answer carries the security headers.

describe('dashboard serving', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-web-'));
  const html = '<!doctype html><html lang="en"><head><script type="module" src="/assets/main-ABC123.js"></script></head><body></body></html>';
  const js = `console.log(${JSON.stringify('x'.repeat(5000))});`;
  let ctx: TestContext;
  before(async () => {
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'index.html'), html);
    fs.writeFileSync(path.join(dir, 'assets', 'main-ABC123.js'), js);
    fs.writeFileSync(path.join(dir, 'assets', 'main-ABC123.js.gz'), gzipSync(js));
    ctx = await createTestContext('sqlite', { FLAGPOST_DASHBOARD_DIR: dir });
  });
  after(async () => {
    await ctx.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const securityHeaders = (headers: Record<string, unknown>) => {
    assert.equal(headers['content-security-policy'], DASHBOARD_CSP);
    assert.match(DASHBOARD_CSP, /script-src 'self'(;|$)/);
    assert.doesNotMatch(DASHBOARD_CSP, /unsafe-inline|unsafe-eval/);
    assert.match(DASHBOARD_CSP, /frame-ancestors 'none'/);
    assert.equal(headers['x-content-type-options'], 'nosniff');
    assert.equal(headers['referrer-policy'], 'no-referrer');
  };

  it('answers index.html, not cached, on every screen of the app', async () => {
    for (const url of ['/', '/sign-in', '/projects', '/projects/abc/flags/x', '/forms', '/forms/k/submissions/01']) {
      const res = await ctx.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, html);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(res.headers['cache-control'], 'no-cache');
      securityHeaders(res.headers);
    }
  });

  it('serves hashed assets for a year, compressed when the client accepts it', async () => {
    const plain = await ctx.app.inject({ method: 'GET', url: '/assets/main-ABC123.js' });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.body, js);
    assert.match(String(plain.headers['cache-control']), /max-age=31536000.*immutable/);
    assert.match(String(plain.headers['content-type']), /javascript/);
    securityHeaders(plain.headers);
    const gz = await ctx.app.inject({ method: 'GET', url: '/assets/main-ABC123.js', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.ok(gz.rawPayload.length < js.length / 10);
  });

  it('keeps JSON 404s for unknown assets and paths outside the app', async () => {
    for (const url of ['/assets/missing.js', '/assets/../index.html', '/nope']) {
      const res = await ctx.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().error, true);
    }
    assert.equal((await ctx.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  });
});

describe('dashboard not built', () => {
  it('serves nothing at / and the API still works', async () => {
    const ctx = await createTestContext('sqlite', { FLAGPOST_DASHBOARD_DIR: path.join(os.tmpdir(), 'flagpost-no-such-dir') });
    try {
      const res = await ctx.app.inject({ method: 'GET', url: '/' });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error, true);
      assert.equal((await ctx.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    } finally {
      await ctx.close();
    }
  });
});
