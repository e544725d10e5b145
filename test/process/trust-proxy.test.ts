import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys } from '../support/fixtures.ts';
import { createForm, listSubmissions, submitJson } from '../support/forms.ts';

// Issue 8: behind FLAGPOST_TRUST_PROXY, X-Forwarded-For counts only as far as the listed proxies added
// it. A client cannot choose its address by sending the header itself.

describe('FLAGPOST_TRUST_PROXY', () => {
  it('takes addresses, ranges and the proxy-addr names', () => {
    assert.deepEqual(loadConfig({ FLAGPOST_TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,loopback' }).trustProxy, ['127.0.0.1', '10.0.0.0/8', 'loopback']);
    assert.deepEqual(loadConfig({}).trustProxy, []);
  });

  it('refuses "true", which used to trust every client, and anything that is no address', () => {
    for (const value of ['true', 'yes', '10.0.0.0/33', 'proxy.example']) {
      assert.throws(
        () => loadConfig({ FLAGPOST_TRUST_PROXY: value }),
        (error) => error instanceof ConfigError && /FLAGPOST_TRUST_PROXY/.test(error.message),
        value,
      );
    }
  });
});

forEachDialect(
  'client addresses behind a trusted proxy',
  (ctx) => {
    it('uses the rightmost address a trusted proxy added, never the leftmost a client sent', async () => {
      const form = await createForm(ctx(), { blockedIps: ['203.0.113.9'] });
      const fromProxy = (xff: string) => submitJson(ctx(), form.key, { a: 1 }, { headers: { 'x-forwarded-for': xff } });
      // The peer of inject() is 127.0.0.1, the trusted proxy.
      assert.equal((await fromProxy('6.6.6.6, 203.0.113.9')).statusCode, 403, 'the real client is blocked');
      const spoofed = await fromProxy('203.0.113.9, 198.51.100.4');
      assert.equal(spoofed.statusCode, 200, 'a client cannot pretend to be a blocked address, nor hide behind one');
      const { submissions } = await listSubmissions(ctx(), form.key);
      const stored = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${submissions[0]!.id}`);
      assert.equal(stored.json().meta.ip, '198.51.100.4');
    });

    it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
      const form = await createForm(ctx(), { blockedIps: ['198.51.100.77'] });
      const res = await ctx().app.inject({
        method: 'POST',
        url: `/v1/s/${form.key}?mode=rest`,
        remoteAddress: '198.51.100.77',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.1' },
        payload: '{"a":1}',
      });
      assert.equal(res.statusCode, 403);
    });

    describe('on the flag read fast path', () => {
      let port = 0;
      let headers: Record<string, string>;
      before(async () => {
        const project = await createProject(ctx());
        await createFlag(ctx(), project.key, { slug: 'checkout', enabled: true });
        headers = keys(project);
        await ctx().app.listen({ port: 0, host: '127.0.0.1' });
        port = (ctx().app.server.address() as AddressInfo).port;
      });

      it('counts a client once whatever it puts in front of the proxy-added address', async () => {
        const statuses: number[] = [];
        for (const spoof of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) {
          const res = await fetch(`http://127.0.0.1:${port}/v1/flags/checkout`, { headers: { ...headers, 'x-forwarded-for': `${spoof}, 203.0.113.50` } });
          statuses.push(res.status);
          await res.arrayBuffer();
        }
        assert.deepEqual(statuses, [200, 200, 429]);
        const other = await fetch(`http://127.0.0.1:${port}/v1/flags/checkout`, { headers: { ...headers, 'x-forwarded-for': '203.0.113.51' } });
        assert.equal(other.status, 200, 'another client has its own budget');
      });
    });
  },
  { FLAGPOST_TRUST_PROXY: '127.0.0.1', FLAGPOST_RATE_LIMIT_MAX: '2' },
);
