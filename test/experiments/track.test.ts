import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { sql } from 'kysely';
import { openDb } from '../../src/db/connect.ts';
import { forEachDialect, type TestContext } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

// POST /v1/track (issue 32): exposures and tracked events in, checked as one batch, written before the
// 202, and nothing of a refused batch kept.

const track = (ctx: TestContext, headers: Record<string, string>, body: unknown, contentType = 'application/json', url = '/v1/track') =>
  ctx.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': contentType, ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });

async function stored(ctx: TestContext): Promise<{ exposures: number; tracked: number }> {
  // Another connection: what a 202 promised is in the database, not only in this process.
  const handle = openDb({ databaseUrl: ctx.config.databaseUrl, dataDir: ctx.config.dataDir, poolSize: 1 });
  try {
    const { rows } = await sql<{
      e: number | string;
      t: number | string;
    }>`select (select count(*) from exposures) as e, (select count(*) from tracked_events) as t`.execute(handle.db);
    return { exposures: Number(rows[0]!.e), tracked: Number(rows[0]!.t) };
  } finally {
    await handle.close();
  }
}

forEachDialect('POST /v1/track', (ctx) => {
  let project: ProjectFixture;
  const now = () => new Date().toISOString();

  before(async () => {
    project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'checkout', type: 'string', variants: { control: 'old', treatment: 'new' }, defaultVariant: 'control' });
  });

  it('accepts exposures and tracked events with 202 {"accepted":N} once they are stored', async () => {
    const before = await stored(ctx());
    const res = await track(ctx(), keys(project), {
      events: [
        { kind: 'exposure', flagKey: 'checkout', variant: 'treatment', targetingKey: 'user-1', timestamp: now() },
        { kind: 'track', name: 'purchase', targetingKey: 'user-1', value: 12.5, attributes: { plan: 'pro', items: 2, gift: false, coupon: null } },
        { kind: 'track', name: 'signup', targetingKey: 'user-2' },
      ],
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json(), { accepted: 3 });
    assert.equal(res.headers['cache-control'], 'no-store');
    const after = await stored(ctx());
    assert.deepEqual(after, { exposures: before.exposures + 1, tracked: before.tracked + 2 });
  });

  it('reads a text/plain body (navigator.sendBeacon) as JSON, with the keys in the query when no header can be sent', async () => {
    const before = await stored(ctx());
    const body = JSON.stringify({ events: [{ kind: 'track', name: 'purchase', targetingKey: 'user-3', value: 3 }] });
    const res = await track(ctx(), {}, body, 'text/plain;charset=UTF-8', `/v1/track?projectKey=${project.key}&environmentKey=${project.environments[0]!.key}`);
    assert.equal(res.statusCode, 202, res.body);
    assert.equal((await stored(ctx())).tracked, before.tracked + 1);
  });

  it('refuses the whole batch with 400 naming the first problem, and stores nothing of it', async () => {
    const before = await stored(ctx());
    const cases: Array<[unknown[], string]> = [
      [
        [
          { kind: 'track', name: 'a', targetingKey: 'u' },
          { kind: 'exposure', flagKey: 'checkout', targetingKey: 'u' },
        ],
        'events[1].variant: required',
      ],
      [[{ kind: 'exposure', flagKey: 'nope', variant: 'treatment', targetingKey: 'u' }], 'events[0].flagKey: no flag nope in this environment'],
      [[{ kind: 'exposure', flagKey: 'checkout', variant: 'blue', targetingKey: 'u' }], 'events[0].variant: flag checkout has no variant blue'],
      [[{ kind: 'click', targetingKey: 'u' }], 'events[0].kind: must be exposure or track'],
      [[{ name: 'a', targetingKey: 'u' }], 'events[0].kind: required'],
      [[{ kind: 'track', name: 'a', targetingKey: 'u', value: '3' }], 'events[0].value: must be a number'],
      [[{ kind: 'track', name: 'a', targetingKey: '' }], 'events[0].targetingKey: must not be empty'],
      [[{ kind: 'track', name: 'a', targetingKey: 'u', extra: 1 }], 'events[0].extra: unknown field'],
      [
        [{ kind: 'track', name: 'a', targetingKey: 'u', attributes: { a: { b: 1 } } }],
        'events[0].attributes.a: must be a string, number, boolean or null (attributes are flat)',
      ],
      [[{ kind: 'track', name: 'a', targetingKey: 'u', attributes: { constructor: 1 } }], 'events[0].attributes.constructor: not allowed'],
      [[{ kind: 'track', name: 'a', targetingKey: 'u', attributes: [1] }], 'events[0].attributes: must be an object'],
      [[{ kind: 'track', name: 'a', targetingKey: 'u', timestamp: 'yesterday' }], 'events[0].timestamp: must be an ISO-8601 date-time with a time zone'],
      [
        [{ kind: 'track', name: 'a', targetingKey: 'u', timestamp: new Date(Date.now() + 6 * 60_000).toISOString() }],
        'events[0].timestamp: more than 5 minutes ahead of the server',
      ],
      [
        [{ kind: 'track', name: 'a', targetingKey: 'u', timestamp: new Date(Date.now() - 8 * 86_400_000).toISOString() }],
        'events[0].timestamp: older than 7 days',
      ],
      [[], 'events: must not be empty'],
      [Array.from({ length: 1001 }, () => ({ kind: 'track', name: 'a', targetingKey: 'u' })), 'events: at most 1000 events'],
    ];
    for (const [events, text] of cases) {
      const res = await track(ctx(), keys(project), { events });
      assert.equal(res.statusCode, 400, `${text}: ${res.body}`);
      assert.equal(res.json().error, true);
      assert.equal(res.json().message, text);
    }
    for (const [body, text] of [
      [{}, 'events: required'],
      [{ events: 'x' }, 'events: must be an array'],
      [[1], 'body: must be an object with events'],
    ] as const) {
      const res = await track(ctx(), keys(project), body);
      assert.equal(res.json().message, text);
    }
    assert.deepEqual(await stored(ctx()), before);
  });

  it('refuses non-finite numbers, prototype keys and bodies that are not JSON with 400', async () => {
    const before = await stored(ctx());
    const bodies = [
      '{"events":[{"kind":"track","name":"a","targetingKey":"u","value":1e999}]}',
      '{"events":[{"kind":"track","name":"a","targetingKey":"u","attributes":{"n":-1e999}}]}',
      '{"events":[{"kind":"track","name":"a","targetingKey":"u","__proto__":{"x":1}}]}',
      '{"events":[{"kind":"track","name":"a","targetingKey":"u","attributes":{"constructor":{"prototype":{"x":1}}}}]}',
      '{"events":[',
      'not json',
    ];
    for (const body of bodies) {
      for (const type of ['application/json', 'text/plain']) {
        const res = await track(ctx(), keys(project), body, type);
        assert.equal(res.statusCode, 400, `${body} as ${type}: ${res.body}`);
        assert.equal(res.json().error, true);
      }
    }
    assert.equal(({} as Record<string, unknown>).x, undefined);
    assert.deepEqual(await stored(ctx()), before);
  });

  it('answers 401 without keys and 403 for unknown keys, as OFREP', async () => {
    const body = { events: [{ kind: 'track', name: 'a', targetingKey: 'u' }] };
    const missing = await track(ctx(), { 'x-project-key': project.key }, body);
    assert.equal(missing.statusCode, 401);
    assert.deepEqual(missing.json(), { error: true, message: 'Missing required headers: x-project-key and x-environment-key' });
    const unknown = await track(ctx(), { 'x-project-key': project.key, 'x-environment-key': 'nope' }, body);
    assert.equal(unknown.statusCode, 403);
    assert.deepEqual(unknown.json(), { error: true, message: 'Unknown project or environment key' });
  });

  it('answers 413 for a body over 1 MiB and 415 for a body type other than JSON or text', async () => {
    const big = JSON.stringify({ events: [{ kind: 'track', name: 'a', targetingKey: 'u', attributes: { a: 'x'.repeat(1_100_000) } }] });
    const res = await track(ctx(), keys(project), big);
    assert.equal(res.statusCode, 413);
    assert.deepEqual(res.json(), { error: true, message: 'Request body is too large' });
    const form = await track(ctx(), keys(project), 'a=1', 'application/x-www-form-urlencoded');
    assert.equal(form.statusCode, 415, form.body);
    assert.deepEqual(form.json(), { error: true, message: 'Unsupported Content-Type' });
  });

  it('answers CORS preflights for any origin, as OFREP', async () => {
    const res = await ctx().app.inject({
      method: 'OPTIONS',
      url: '/v1/track',
      headers: {
        origin: 'https://shop.test',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-project-key,x-environment-key',
      },
    });
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.match(String(res.headers['access-control-allow-headers']), /x-environment-key/);
  });
});

forEachDialect(
  'POST /v1/track rate limits',
  (ctx) => {
    it('counts against the per-IP limit of the flag interface: 429 with Retry-After', async () => {
      const project = await createProject(ctx());
      const body = { events: [{ kind: 'track', name: 'a', targetingKey: 'u' }] };
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await track(ctx(), keys(project), body)).statusCode);
      assert.deepEqual(statuses, [202, 202, 202, 429]);
      const limited = await track(ctx(), keys(project), body);
      assert.ok(limited.headers['retry-after']);
      assert.equal(limited.json().message, 'Too many requests, please try again later.');
    });
  },
  { FLAGPOST_RATE_LIMIT_MAX: '3' },
);

let clockOffsetMs = 0;
forEachDialect(
  'Event retention',
  (ctx) => {
    it('deletes events older than FLAGPOST_EVENTS_RETENTION_DAYS in a round of the retention job, and keeps younger ones', async () => {
      clockOffsetMs = 0;
      const project = await createProject(ctx());
      const body = (key: string) => ({ events: [{ kind: 'track', name: 'a', targetingKey: key }] });
      assert.equal((await track(ctx(), keys(project), body('old'))).statusCode, 202);
      clockOffsetMs = 20 * 86_400_000;
      assert.equal((await track(ctx(), keys(project), body('young'))).statusCode, 202);
      clockOffsetMs = 31 * 86_400_000;
      await ctx().services.retention.runOnce();
      const left = await ctx().services.trackedEvents.findPerson(['old', 'young']);
      assert.deepEqual(
        left.tracked.map((e) => e.name),
        ['a'],
      );
      assert.equal((await ctx().services.trackedEvents.findPerson(['young'])).tracked.length, 1);
    });
  },
  { FLAGPOST_EVENTS_RETENTION_DAYS: '30', FLAGPOST_RETENTION_INTERVAL_MS: '0' },
  { clock: () => new Date(Date.now() + clockOffsetMs) },
);
