import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { before, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, forEachDialect } from '../support/context.ts';
import { createForm, multipart } from '../support/forms.ts';

// Issue 20, "Fix first" 4: the admin lockout, the event-stream cap and the upload cap count clients as
// the rate limiter does (IPv6 per /64); only presented, wrong credentials count; a valid credential is
// never refused because of other people's failures from the same address.

const PASSWORD = 'correct horse battery staple';
const cookieOf = (res: LightMyRequestResponse) => res.cookies.map((c) => `${c.name}=${c.value}`).join('; ');

forEachDialect(
  'the admin lockout (issue 20)',
  (ctx) => {
    const get = (remoteAddress: string, headers: Record<string, string> = {}) =>
      ctx().app.inject({ method: 'GET', url: '/admin/v1/projects', remoteAddress, headers });
    const wrong = { authorization: 'Bearer a-wrong-token-guess' };

    before(async () => {
      const created = await ctx().admin('POST', '/admin/v1/users', { email: 'ada@example.com', password: PASSWORD });
      assert.equal(created.statusCode, 201, created.body);
    });

    it('counts the addresses of one IPv6 /64 together', async () => {
      for (const host of ['1', '2', '3']) assert.equal((await get(`2001:db8:1:2::${host}`, wrong)).statusCode, 401);
      const locked = await get('2001:db8:1:2::ffff', wrong);
      assert.equal(locked.statusCode, 429);
      assert.ok(Number(locked.headers['retry-after']) > 0);
      assert.equal((await get('2001:db8:1:3::1', wrong)).statusCode, 401, 'the next /64 is another client');
      // An IPv4-mapped address is its IPv4 address.
      for (let i = 0; i < 3; i++) assert.equal((await get('192.0.2.50', wrong)).statusCode, 401);
      assert.equal((await get('::ffff:192.0.2.50', wrong)).statusCode, 429);
    });

    it('counts no request without a credential: 30 anonymous requests lock nobody out', async () => {
      for (let i = 0; i < 30; i++) assert.equal((await get('198.51.100.40')).statusCode, 401);
      const signedIn = await ctx().app.inject({
        method: 'POST',
        url: '/admin/v1/sessions',
        remoteAddress: '198.51.100.40',
        payload: { email: 'ada@example.com', password: PASSWORD },
      });
      assert.equal(signedIn.statusCode, 201, signedIn.body);
      assert.equal((await get('198.51.100.40', wrong)).statusCode, 401, 'no failure was counted before');
    });

    it("accepts a valid session, access token and admin token from an address locked out by someone else's guesses", async () => {
      const signedIn = await ctx().app.inject({
        method: 'POST',
        url: '/admin/v1/sessions',
        remoteAddress: '198.51.100.41',
        payload: { email: 'ada@example.com', password: PASSWORD },
      });
      const cookie = cookieOf(signedIn);
      for (let i = 0; i < 3; i++) await get('198.51.100.42', wrong);
      assert.equal((await get('198.51.100.42', wrong)).statusCode, 429);
      assert.equal((await get('198.51.100.42', { cookie })).statusCode, 200);
      const minted = await ctx().app.inject({
        method: 'POST',
        url: '/admin/v1/me/tokens',
        headers: { cookie, origin: ctx().config.publicUrl },
        payload: { name: 'ci', password: PASSWORD },
      });
      assert.equal(minted.statusCode, 201, minted.body);
      assert.equal((await get('198.51.100.42', { authorization: `Bearer ${minted.json().token}` })).statusCode, 200);
      // A member's credential does not clear the count: wrong ones are still refused.
      assert.equal((await get('198.51.100.42', wrong)).statusCode, 429);
      assert.equal((await get('198.51.100.42', { authorization: `Bearer ${ADMIN_TOKEN}` })).statusCode, 200);
      assert.equal((await get('198.51.100.42', wrong)).statusCode, 401, 'the admin token clears the count');
    });
  },
  { FLAGPOST_ADMIN_MAX_FAILURES: '3' },
);

forEachDialect(
  'the event-stream and upload caps per client (issue 20)',
  (ctx) => {
    let base = '';
    let project: { key: string; environments: Array<{ key: string }> };
    before(async () => {
      project = (await ctx().admin('POST', '/admin/v1/projects', { name: 'Shop' })).json();
      await ctx().app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
    });

    it('counts the event streams of one IPv6 /64 together', async () => {
      const bulk = await fetch(`${base}/ofrep/v1/evaluate/flags`, {
        method: 'POST',
        headers: { 'x-project-key': project.key, 'x-environment-key': project.environments[0]!.key, 'content-type': 'application/json' },
        body: '{}',
      });
      const uri = ((await bulk.json()) as { eventStreams: Array<{ endpoint: { requestUri: string } }> }).eventStreams[0]!.endpoint.requestUri;
      const open = (forwardedFor: string) =>
        new Promise<{ status: number; close: () => void }>((resolve, reject) => {
          const req = http.get(base + uri, { headers: { 'x-forwarded-for': forwardedFor } }, (res) => {
            res.resume();
            resolve({ status: res.statusCode!, close: () => req.destroy() });
          });
          req.on('error', reject);
        });
      const streams = [await open('2001:db8:7:8::1'), await open('2001:db8:7:8::2')];
      try {
        assert.deepEqual(
          streams.map((s) => s.status),
          [200, 200],
        );
        const third = await open('2001:db8:7:8::3');
        third.close();
        assert.equal(third.status, 429, 'a third address of the same /64 is the same client');
        const other = await open('2001:db8:7:9::1');
        other.close();
        assert.equal(other.status, 200);
      } finally {
        for (const s of streams) s.close();
      }
    });

    it('counts the uploads under way of one IPv6 /64 together', async () => {
      const form = await createForm(ctx(), { uploadsEnabled: true });
      const { payload: body, contentType } = multipart([{ name: 'file', filename: 'a.txt', content: 'hello' }]);
      // The first upload sends half its body and waits: it holds its slot.
      const slow = new PassThrough();
      slow.write(body.subarray(0, 20));
      const first = ctx().app.inject({
        method: 'POST',
        url: `/v1/s/${form.key}?mode=rest`,
        remoteAddress: '2001:db8:9:9::1',
        headers: { 'content-type': contentType },
        payload: slow,
      });
      await new Promise((r) => setTimeout(r, 200));
      const second = await ctx().app.inject({
        method: 'POST',
        url: `/v1/s/${form.key}?mode=rest`,
        remoteAddress: '2001:db8:9:9::2',
        headers: { 'content-type': contentType },
        payload: body,
      });
      assert.equal(second.statusCode, 429, second.body);
      slow.end(body.subarray(20));
      assert.equal((await first).statusCode, 200);
    });
  },
  { FLAGPOST_MAX_STREAMS_PER_CLIENT: '2', FLAGPOST_MAX_UPLOADS_PER_CLIENT: '1', FLAGPOST_TRUST_PROXY: 'loopback' },
);
