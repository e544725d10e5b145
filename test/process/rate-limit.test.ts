import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { registerErrorHandling } from '../../src/http/error-handler.ts';
import { createRateLimiter, registerRateLimit } from '../../src/http/rate-limit.ts';
import { createTestContext, forEachDialect, type TestContext } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

/** A client address no other run of this suite uses, so counts kept in a shared Redis never collide. */
function uniqueIp(): string {
  const [a, b, c] = randomBytes(3);
  return `10.${a}.${b}.${c}`;
}

const limited = { error: true, message: 'Too many requests, please try again later.' };

forEachDialect(
  'rate limits (contract D20)',
  (ctx) => {
    let project: ProjectFixture;
    before(async () => {
      project = await createProject(ctx());
      await createFlag(ctx(), project.key, { slug: 'checkout', enabled: true });
    });

    const read = (ip: string) => ctx().app.inject({ method: 'GET', url: '/v1/flags/checkout', headers: keys(project), remoteAddress: ip });

    it('counts flag reads per client IP and answers 429 JSON with Retry-After and RateLimit-* headers', async () => {
      const ip = uniqueIp();
      for (let i = 1; i <= 3; i++) {
        const res = await read(ip);
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['ratelimit-limit'], '3');
        assert.equal(res.headers['ratelimit-remaining'], String(3 - i));
        assert.ok(Number(res.headers['ratelimit-reset']) > 0);
      }
      const res = await read(ip);
      assert.equal(res.statusCode, 429);
      assert.deepEqual(res.json(), limited);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['ratelimit-limit'], '3');
      assert.equal(res.headers['ratelimit-remaining'], '0');
      const retryAfter = Number(res.headers['retry-after']);
      assert.ok(retryAfter > 0 && retryAfter <= 60, `retry-after ${res.headers['retry-after']}`);

      const other = await read(uniqueIp());
      assert.equal(other.statusCode, 200, 'another client keeps its own budget');
    });

    it('shares one budget across the flag endpoints, including POSTs', async () => {
      const ip = uniqueIp();
      const urls = ['/v1/flags', '/v1/flags/preview'];
      for (const url of urls) {
        const res = await ctx().app.inject({ method: 'GET', url, headers: keys(project), remoteAddress: ip });
        assert.equal(res.statusCode, 200);
      }
      await read(ip);
      const res = await ctx().app.inject({
        method: 'POST',
        url: '/v1/flags/preview/feedback',
        headers: { ...keys(project), 'content-type': 'application/json' },
        payload: JSON.stringify({ flagKey: 'checkout', mood: 'HAPPY', rating: 5 }),
        remoteAddress: ip,
      });
      assert.equal(res.statusCode, 429);
      assert.deepEqual(res.json(), limited);
    });

    it('limits form submissions (surface forms) with the same budget', async () => {
      const form = await ctx().admin('POST', '/admin/v1/forms', { name: 'Contact' });
      assert.equal(form.statusCode, 201, form.body);
      const ip = uniqueIp();
      const submit = () =>
        ctx().app.inject({
          method: 'POST',
          url: `/v1/s/${form.json().key}?mode=rest`,
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          payload: JSON.stringify({ email: 'ada@example.com' }),
          remoteAddress: ip,
        });
      for (let i = 0; i < 3; i++) assert.equal((await submit()).statusCode, 200);
      const res = await submit();
      assert.equal(res.statusCode, 429);
      assert.equal(res.json().error, true);
      assert.equal(res.json().message, 'Too many requests, please try again later.');
      assert.ok(res.headers['retry-after']);
    });

    it('never limits the admin API or the health probes', async () => {
      const ip = uniqueIp();
      for (let i = 0; i < 6; i++) {
        const admin = await ctx().app.inject({
          method: 'GET',
          url: '/admin/v1/projects',
          headers: { authorization: 'Bearer test-admin-token-0123456789' },
          remoteAddress: ip,
        });
        assert.equal(admin.statusCode, 200);
        assert.equal(admin.headers['ratelimit-limit'], undefined);
        for (const url of ['/healthz', '/livez', '/readyz']) {
          const health = await ctx().app.inject({ method: 'GET', url, remoteAddress: ip });
          assert.equal(health.statusCode, 200, url);
          assert.equal(health.headers['ratelimit-limit'], undefined, url);
        }
      }
    });
  },
  { FLAGPOST_RATE_LIMIT_MAX: '3', FLAGPOST_RATE_LIMIT_WINDOW_MS: '60000' },
);

describe('rate limits by surface', () => {
  it('limits any route of the form surface without the route knowing, and no route without a surface', async () => {
    const app = Fastify({ logger: false });
    registerErrorHandling(app);
    await registerRateLimit(app, await createRateLimiter(loadConfig({ FLAGPOST_RATE_LIMIT_MAX: '2' })));
    app.post('/v1/s/:key', { config: { surface: 'forms' } }, async () => ({ success: true }));
    app.get('/other', async () => ({ ok: true }));
    const ip = uniqueIp();
    const post = () => app.inject({ method: 'POST', url: '/v1/s/abc', remoteAddress: ip });
    assert.equal((await post()).statusCode, 200);
    assert.equal((await post()).statusCode, 200);
    const res = await post();
    assert.equal(res.statusCode, 429);
    assert.ok(res.headers['retry-after']);
    for (let i = 0; i < 4; i++) assert.equal((await app.inject({ method: 'GET', url: '/other', remoteAddress: ip })).statusCode, 200);
    await app.close();
  });

  it('is off when FLAGPOST_RATE_LIMIT_MAX is 0', async () => {
    assert.equal(await createRateLimiter(loadConfig({ FLAGPOST_RATE_LIMIT_MAX: '0' })), undefined);
  });
});

const redisUrl = process.env.TEST_REDIS_URL;
describe('rate limits shared through Redis (REDIS_URL)', { skip: redisUrl ? false : 'TEST_REDIS_URL is not set' }, () => {
  let one: TestContext;
  let two: TestContext;
  let project: ProjectFixture;
  const env = { REDIS_URL: redisUrl ?? '', FLAGPOST_RATE_LIMIT_MAX: '4', FLAGPOST_RATE_LIMIT_WINDOW_MS: '60000' };
  before(async () => {
    one = await createTestContext('sqlite', env);
    two = await createTestContext('sqlite', env);
    project = await createProject(one);
    await createFlag(one, project.key, { slug: 'checkout', enabled: true });
  });
  after(async () => {
    await one?.close();
    await two?.close();
  });

  it('counts the requests of one client on two instances against one budget', async () => {
    const ip = uniqueIp();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const instance = i % 2 === 0 ? one : two;
      // Instance two has no such project: its answer is the flag 404, which counts all the same.
      const res = await instance.app.inject({ method: 'GET', url: '/v1/flags/checkout', headers: keys(project), remoteAddress: ip });
      statuses.push(res.statusCode);
      if (res.statusCode !== 429) assert.equal(res.headers['ratelimit-remaining'], String(4 - (i + 1)));
    }
    assert.deepEqual(statuses, [200, 404, 200, 404, 429, 429]);
  });
});
