import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, forEachDialect, type TestContext } from '../support/context.ts';

// Issue 9: the dashboard's sign-in. The admin token is exchanged for an HttpOnly, SameSite=Strict
// session cookie backed by a hashed session row with an expiry; cookie-authenticated writes must come
// from Flagpost's own origin; signing out ends the session.

const PUBLIC_URL = 'http://flags.test:3000';
let now = new Date('2026-11-22T10:00:00.000Z');
const clock = () => new Date(now);

const signIn = (ctx: TestContext, token: string, remoteAddress = '127.0.0.1') =>
  ctx.app.inject({
    method: 'POST',
    url: '/admin/v1/sessions',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ token }),
    remoteAddress,
  });

const cookieOf = (res: LightMyRequestResponse) => {
  const header = String(res.headers['set-cookie']);
  return { header, value: /^flagpost_session=([^;]+)/.exec(header)?.[1] };
};

const withCookie = (ctx: TestContext, value: string, method: 'GET' | 'POST' | 'DELETE', url: string, headers: Record<string, string> = {}, body?: unknown) =>
  ctx.app.inject({
    method,
    url,
    headers: { cookie: `flagpost_session=${value}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });

forEachDialect(
  'dashboard sessions',
  (ctx) => {
    it('exchanges the admin token for an HttpOnly, SameSite=Strict cookie and stores only its hash', async () => {
      const wrong = await signIn(ctx(), 'not-the-token-at-all');
      assert.equal(wrong.statusCode, 401);
      assert.equal(wrong.json().message, 'Missing or invalid admin token');
      assert.equal(wrong.headers['set-cookie'], undefined);

      const res = await signIn(ctx(), ADMIN_TOKEN);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.json().expiresAt, new Date(now.getTime() + 12 * 3_600_000).toISOString());
      const { header, value } = cookieOf(res);
      assert.ok(value && value.length > 40, header);
      assert.match(header, /; Max-Age=43200/);
      assert.match(header, /; Path=\//);
      assert.match(header, /; HttpOnly/);
      assert.match(header, /; SameSite=Strict/);
      assert.doesNotMatch(header, /Secure/, 'plain http public URL');

      const rows = await ctx().handle.db.selectFrom('sessions').selectAll().execute();
      assert.equal(rows.length, 1);
      assert.ok(!JSON.stringify(rows).includes(value!), 'the token itself is not stored');
      assert.ok(!JSON.stringify(rows).includes(ADMIN_TOKEN));

      const current = await withCookie(ctx(), value!, 'GET', '/admin/v1/sessions/current');
      assert.equal(current.statusCode, 200);
      assert.deepEqual(current.json(), { expiresAt: res.json().expiresAt, role: 'owner', user: null });
      assert.equal((await withCookie(ctx(), value!, 'GET', '/admin/v1/projects')).statusCode, 200);
      assert.equal((await withCookie(ctx(), 'fps_forged', 'GET', '/admin/v1/projects')).statusCode, 401);
      // With the bearer token there is no session to speak of.
      assert.deepEqual((await ctx().admin('GET', '/admin/v1/sessions/current')).json(), { expiresAt: null, role: 'owner', user: null });
    });

    it('refuses cookie-authenticated writes from another origin or without one, and changes nothing', async () => {
      const { value } = cookieOf(await signIn(ctx(), ADMIN_TOKEN));
      const before = (await ctx().admin('GET', '/admin/v1/projects')).json().projects.length;
      for (const origin of ['https://evil.example', 'null', 'http://flags.test:3001', undefined]) {
        const res = await withCookie(ctx(), value!, 'POST', '/admin/v1/projects', origin ? { origin } : {}, { name: 'Forged' });
        assert.equal(res.statusCode, 403, `origin ${origin}`);
        assert.equal(res.json().message, 'Cross-site request refused: a signed-in write must come from the dashboard origin');
      }
      assert.equal((await ctx().admin('GET', '/admin/v1/projects')).json().projects.length, before);
      // The public URL's origin, and the request's own origin (Host), are the dashboard's.
      assert.equal((await withCookie(ctx(), value!, 'POST', '/admin/v1/projects', { origin: PUBLIC_URL }, { name: 'Mine' })).statusCode, 201);
      const own = await withCookie(
        ctx(),
        value!,
        'POST',
        '/admin/v1/projects',
        { origin: 'http://127.0.0.1:4000', host: '127.0.0.1:4000' },
        { name: 'Mine too' },
      );
      assert.equal(own.statusCode, 201, own.body);
      // A wrong bearer token is not rescued by a valid cookie.
      const both = await withCookie(ctx(), value!, 'GET', '/admin/v1/projects', { authorization: 'Bearer wrong-token' });
      assert.equal(both.statusCode, 401);
    });

    it('ends the session on sign-out and when it expires', async () => {
      const first = cookieOf(await signIn(ctx(), ADMIN_TOKEN)).value!;
      const out = await withCookie(ctx(), first, 'DELETE', '/admin/v1/sessions/current', { origin: PUBLIC_URL });
      assert.equal(out.statusCode, 204);
      assert.match(String(out.headers['set-cookie']), /^flagpost_session=;.*Expires=Thu, 01 Jan 1970/);
      assert.equal((await withCookie(ctx(), first, 'GET', '/admin/v1/sessions/current')).statusCode, 401);
      assert.equal((await withCookie(ctx(), first, 'GET', '/admin/v1/projects')).statusCode, 401);

      const second = cookieOf(await signIn(ctx(), ADMIN_TOKEN)).value!;
      now = new Date(now.getTime() + 12 * 3_600_000 - 1000);
      assert.equal((await withCookie(ctx(), second, 'GET', '/admin/v1/projects')).statusCode, 200);
      now = new Date(now.getTime() + 1000);
      assert.equal((await withCookie(ctx(), second, 'GET', '/admin/v1/projects')).statusCode, 401, 'expired');
      // The next sign-in removes expired rows.
      await signIn(ctx(), ADMIN_TOKEN);
      assert.equal((await ctx().handle.db.selectFrom('sessions').selectAll().execute()).length, 1);
    });

    it('counts wrong sign-in tokens in the admin lockout, and still accepts the right one', async () => {
      for (let i = 0; i < 3; i++) assert.equal((await signIn(ctx(), `wrong-${i}-xxxxxxxxxxxx`, '10.9.9.9')).statusCode, 401);
      const locked = await signIn(ctx(), 'wrong-3-xxxxxxxxxxxx', '10.9.9.9');
      assert.equal(locked.statusCode, 429);
      assert.ok(Number(locked.headers['retry-after']) > 0);
      assert.equal((await signIn(ctx(), 'wrong-4-xxxxxxxxxxxx', '10.9.9.10')).statusCode, 401, 'another address is not locked out');
      assert.equal((await signIn(ctx(), ADMIN_TOKEN, '10.9.9.9')).statusCode, 201, 'the right token gets in from a locked-out address');
    });
  },
  { FLAGPOST_PUBLIC_URL: PUBLIC_URL, FLAGPOST_ADMIN_MAX_FAILURES: '3' },
  { clock },
);

forEachDialect(
  'dashboard sessions over https',
  (ctx) => {
    it('uses a Secure __Host- cookie when the public URL is https', async () => {
      const res = await signIn(ctx(), ADMIN_TOKEN);
      const header = String(res.headers['set-cookie']);
      assert.match(header, /^__Host-flagpost_session=[^;]+; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
      const value = /^__Host-flagpost_session=([^;]+)/.exec(header)![1]!;
      const ok = await ctx().app.inject({ method: 'GET', url: '/admin/v1/projects', headers: { cookie: `__Host-flagpost_session=${value}` } });
      assert.equal(ok.statusCode, 200);
      // The plain name is not accepted over https.
      const plain = await ctx().app.inject({ method: 'GET', url: '/admin/v1/projects', headers: { cookie: `flagpost_session=${value}` } });
      assert.equal(plain.statusCode, 401);
    });
  },
  { FLAGPOST_PUBLIC_URL: 'https://flags.example.com' },
);
