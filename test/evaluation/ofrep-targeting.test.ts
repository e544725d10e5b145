import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect, type TestContext } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

// OFREP with an evaluation context (issue 18): the engine's answers over HTTP, per user, with reasons,
// variants and metadata; bulk ETags that cover the context; bad contexts answered without a 5xx.

const post = (ctx: TestContext, url: string, headers: Record<string, string>, body?: string) =>
  ctx.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: body });

interface OfrepFlag {
  key: string;
  value?: unknown;
  reason?: string;
  variant?: string;
  metadata?: Record<string, unknown>;
  errorCode?: string;
}

forEachDialect('OFREP evaluations with a context', (ctx) => {
  let project: ProjectFixture;
  const envKey = () => project.environments[0]!.key;
  const patch = (slug: string, body: unknown) => ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${envKey()}/flags/${slug}`, body);
  const single = async (key: string, context?: unknown) => {
    const res = await post(ctx(), `/ofrep/v1/evaluate/flags/${key}`, keys(project), context === undefined ? '{}' : JSON.stringify({ context }));
    return { status: res.statusCode, body: res.json() as OfrepFlag, headers: res.headers };
  };
  const bulk = async (context: unknown, extra: Record<string, string> = {}) => {
    const res = await post(ctx(), '/ofrep/v1/evaluate/flags', { ...keys(project), ...extra }, JSON.stringify({ context }));
    return {
      status: res.statusCode,
      etag: res.headers.etag as string | undefined,
      body: res.body,
      flags: res.statusCode === 200 ? (res.json().flags as OfrepFlag[]) : [],
    };
  };

  before(async () => {
    project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'plain', enabled: true, description: 'No rules' });
    await createFlag(ctx(), project.key, { slug: 'checkout', enabled: false, payload: { layout: 'new' } });
    await createFlag(ctx(), project.key, { slug: 'banner', type: 'string', variants: { red: 'red', blue: 'blue', green: 'green' }, defaultVariant: 'green' });
    await createFlag(ctx(), project.key, { slug: 'kill', enabled: false });
    await createFlag(ctx(), project.key, { slug: 'limit', type: 'number', variants: { low: 10, high: 100 }, defaultVariant: 'low' });
    let res = await patch('checkout', {
      rules: [
        { id: 'eu', name: 'Europe', conditions: [{ attribute: 'country', operator: 'in', values: ['DE', 'FR'] }], serve: { variant: 'on' } },
        { id: 'off-rule', name: 'Switched off', enabled: false, conditions: [], serve: { variant: 'on' } },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    // A new string or number flag starts switched off (DISABLED) until it is switched on per environment.
    res = await patch('banner', {
      state: 'ENABLED',
      rules: [
        { id: 'vip', name: 'VIPs', conditions: [{ attribute: 'user.tier', operator: 'equals', values: ['gold'] }], serve: { variant: 'red' } },
        {
          id: 'ab',
          name: 'A/B',
          conditions: [],
          serve: {
            split: {
              weights: [
                { variant: 'red', weight: 50 },
                { variant: 'blue', weight: 50 },
              ],
            },
          },
        },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    res = await patch('limit', {
      state: 'ENABLED',
      defaultVariant: null,
      rules: [{ id: 'pro', conditions: [{ attribute: 'plan', operator: 'equals', values: ['pro'] }], serve: { variant: 'high' } }],
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('answers flags without rules as STATIC, whatever the context', async () => {
    const a = await single('plain', { targetingKey: 'u-1', country: 'DE' });
    assert.deepEqual(a.body, { key: 'plain', value: true, reason: 'STATIC', variant: 'on', metadata: { description: 'No rules' } });
    assert.deepEqual((await single('plain')).body, a.body);
    // A boolean flag that is merely false is STATIC false, never DISABLED.
    assert.deepEqual((await single('kill', { targetingKey: 'u-1' })).body, { key: 'kill', value: false, reason: 'STATIC', variant: 'off', metadata: {} });
  });

  it('evaluates rules per user: TARGETING_MATCH with the rule in metadata, DEFAULT otherwise', async () => {
    const de = await single('checkout', { targetingKey: 'u-1', country: 'DE' });
    assert.equal(de.status, 200);
    assert.deepEqual(de.body, {
      key: 'checkout',
      value: true,
      reason: 'TARGETING_MATCH',
      variant: 'on',
      metadata: { payload: '{"layout":"new"}', ruleId: 'eu', ruleName: 'Europe' },
    });
    assert.equal(de.headers['cache-control'], 'no-store');
    const us = await single('checkout', { targetingKey: 'u-1', country: 'US' });
    assert.deepEqual(us.body, { key: 'checkout', value: false, reason: 'DEFAULT', variant: 'off', metadata: { payload: '{"layout":"new"}' } });
    assert.deepEqual((await single('checkout')).body, us.body, 'no context: the default serve');
    // /v1 has no context: it shows the default serve (docs/adr/0025), in today's shape.
    const v1 = await ctx().app.inject({ method: 'GET', url: '/v1/flags/checkout', headers: keys(project) });
    assert.equal(v1.body, '{"slug":"checkout","enabled":false,"payload":{"layout":"new"},"expiredAt":null,"description":""}');
    // The payload key follows the flag's evaluation.
    const payload = await single('checkout:payload', { country: 'FR' });
    assert.deepEqual(payload.body, { key: 'checkout:payload', reason: 'TARGETING_MATCH', variant: 'on', value: { layout: 'new' } });
  });

  it('splits users stickily by targetingKey (SPLIT), and rules before the split win', async () => {
    const seen = new Map<string, string>();
    for (let i = 0; i < 40; i++) {
      const { body } = await single('banner', { targetingKey: `user-${i}` });
      assert.equal(body.reason, 'SPLIT');
      assert.ok(body.variant === 'red' || body.variant === 'blue', JSON.stringify(body));
      assert.equal(body.value, body.variant);
      assert.equal(body.metadata!.ruleId, 'ab');
      assert.equal(body.metadata!.bucketing, 'flagd-fractional-v2');
      seen.set(`user-${i}`, body.variant!);
      assert.equal((await single('banner', { targetingKey: `user-${i}` })).body.variant, body.variant, 'sticky');
    }
    assert.ok(new Set(seen.values()).size === 2, 'both halves of the split are served');
    const vip = await single('banner', { targetingKey: 'user-1', user: { tier: 'gold' } });
    assert.deepEqual([vip.body.reason, vip.body.variant, vip.body.metadata!.ruleId], ['TARGETING_MATCH', 'red', 'vip']);
  });

  it('answers no value when the targeting serves no variant, so that the caller default applies', async () => {
    assert.deepEqual((await single('limit', { plan: 'free' })).body, { key: 'limit', reason: 'DEFAULT', metadata: {} });
    assert.deepEqual((await single('limit', { plan: 'pro' })).body, {
      key: 'limit',
      value: 100,
      reason: 'TARGETING_MATCH',
      variant: 'high',
      metadata: { ruleId: 'pro', ruleName: '' },
    });
  });

  it('answers DISABLED without a value only for a flag switched off in flagd sense', async () => {
    assert.equal((await patch('limit', { state: 'DISABLED' })).statusCode, 200);
    assert.deepEqual((await single('limit', { plan: 'pro' })).body, { key: 'limit', reason: 'DISABLED', metadata: {} });
    const all = await bulk({ plan: 'pro' });
    assert.deepEqual(
      all.flags.find((f) => f.key === 'limit'),
      { key: 'limit', reason: 'DISABLED', metadata: {} },
    );
    assert.equal((await patch('limit', { state: 'ENABLED' })).statusCode, 200);
  });

  it('names the segments of the matching rule, and follows a change of the segment at once', async () => {
    const segments = `/admin/v1/projects/${project.key}/segments`;
    let res = await ctx().admin('POST', segments, {
      key: 'staff',
      name: 'Staff',
      match: 'any',
      conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@corp.com'] }],
    });
    assert.equal(res.statusCode, 201, res.body);
    await createFlag(ctx(), project.key, { slug: 'internal', enabled: false });
    res = await patch('internal', { rules: [{ id: 'staff-rule', name: 'Staff', segments: ['staff'], serve: { variant: 'on' } }] });
    assert.equal(res.statusCode, 200, res.body);
    const staff = await single('internal', { email: 'ann@corp.com' });
    assert.deepEqual(staff.body, {
      key: 'internal',
      value: true,
      reason: 'TARGETING_MATCH',
      variant: 'on',
      metadata: { ruleId: 'staff-rule', ruleName: 'Staff', segments: 'staff' },
    });
    assert.equal((await single('internal', { email: 'bob@example.org' })).body.reason, 'DEFAULT');
    res = await ctx().admin('PATCH', `${segments}/staff`, { conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@example.org'] }] });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await single('internal', { email: 'bob@example.org' })).body.value, true, 'the new segment, right after the write');
    assert.equal((await single('internal', { email: 'ann@corp.com' })).body.reason, 'DEFAULT');
  });

  it('evaluates every flag in the bulk answer for the context, in the order of GET /v1/flags', async () => {
    const { status, flags } = await bulk({ targetingKey: 'user-3', country: 'DE' });
    assert.equal(status, 200);
    const list = (await ctx().app.inject({ method: 'GET', url: '/v1/flags', headers: keys(project) })).json().flags as Array<{ slug: string }>;
    assert.deepEqual(
      flags.map((f) => f.key),
      list.flatMap((f) => [f.slug, `${f.slug}:payload`]),
    );
    const byKey = new Map(flags.map((f) => [f.key, f]));
    assert.deepEqual(byKey.get('checkout'), (await single('checkout', { targetingKey: 'user-3', country: 'DE' })).body);
    assert.deepEqual(byKey.get('banner'), (await single('banner', { targetingKey: 'user-3', country: 'DE' })).body);
    assert.deepEqual(byKey.get('plain'), (await single('plain')).body);
  });

  it('gives the bulk answer an ETag that covers the context: no 304 when an attribute a rule reads changes', async () => {
    const de = await bulk({ targetingKey: 'user-3', country: 'DE' });
    assert.match(de.etag!, /^"[\w-]+"$/);
    const again = await bulk({ targetingKey: 'user-3', country: 'DE' }, { 'if-none-match': de.etag! });
    assert.equal(again.status, 304, 'same context, same configuration');
    const us = await bulk({ targetingKey: 'user-3', country: 'US' }, { 'if-none-match': de.etag! });
    assert.equal(us.status, 200, 'same targetingKey, another country: a new answer');
    assert.notEqual(us.etag, de.etag);
    assert.equal(us.flags.find((f) => f.key === 'checkout')!.value, false);
    // An attribute no rule reads gives the same answer, so the same ETag.
    assert.equal((await bulk({ targetingKey: 'user-3', country: 'DE', unrelated: 1 }, { 'if-none-match': de.etag! })).status, 304);
    // A change of the configuration changes the answer for the same context.
    assert.equal((await patch('plain', { description: 'Changed' })).statusCode, 200);
    assert.equal((await bulk({ targetingKey: 'user-3', country: 'DE' }, { 'if-none-match': de.etag! })).status, 200);
  });

  it('answers bad contexts with 400 INVALID_CONTEXT or evaluates them, never a 5xx', async () => {
    let nested: unknown = 'x';
    for (let i = 0; i < 50; i++) nested = { n: nested };
    const contexts: unknown[] = [
      { targetingKey: 5 },
      { targetingKey: ['a'] },
      nested,
      { country: 'x'.repeat(10_000) },
      { country: 'DE'.repeat(3000) },
      { list: Array.from({ length: 5000 }, (_, i) => i) },
      { country: null, user: { tier: { deep: true } } },
      { country: 7, user: 'gold' },
      { __proto__: { country: 'DE' }, constructor: 'x' },
    ];
    for (const context of contexts) {
      for (const url of [
        '/ofrep/v1/evaluate/flags',
        '/ofrep/v1/evaluate/flags/checkout',
        '/ofrep/v1/evaluate/flags/banner:payload',
        '/ofrep/v1/evaluate/flags/plain',
      ]) {
        const res = await post(ctx(), url, keys(project), JSON.stringify({ context }));
        assert.ok(
          res.statusCode === 200 || res.statusCode === 400,
          `${url} ${JSON.stringify(context).slice(0, 80)}: ${res.statusCode} ${res.body.slice(0, 200)}`,
        );
        // GENERAL: flagd's own evaluation error, should the engine meet one.
        if (res.statusCode === 400) assert.ok(['INVALID_CONTEXT', 'GENERAL'].includes(res.json().errorCode), res.body);
      }
    }
    const invalid = await single('checkout', { targetingKey: 5 });
    assert.deepEqual(invalid.body, { key: 'checkout', errorCode: 'INVALID_CONTEXT', errorDetails: 'targetingKey must be a string' });
    assert.equal((await single('checkout', nested)).body.errorCode, 'INVALID_CONTEXT');
    const all = await bulk(nested);
    assert.equal(all.status, 400);
    assert.equal(JSON.parse(all.body).errorCode, 'INVALID_CONTEXT');
    // An attribute of a type a rule cannot compare (an object where a string is compared) does not match.
    const mixed = await bulk({ targetingKey: 'u', country: 'DE', user: { tier: { deep: true } } });
    assert.equal(mixed.status, 200);
    const banner = mixed.flags.find((f) => f.key === 'banner')!;
    assert.equal(banner.errorCode, undefined);
    assert.equal(banner.reason, 'SPLIT');
    assert.equal(mixed.flags.find((f) => f.key === 'checkout')!.reason, 'TARGETING_MATCH');
    // A flag that reads no context answers whatever the context holds.
    assert.equal((await single('plain', { targetingKey: 5 })).status, 200);
  });
});
