import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, it } from 'node:test';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OpenFeature } from '@openfeature/server-sdk';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { forEachDialect, type TestContext } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';
import { freePort } from '../support/process.ts';

// Issue 10: OpenFeature Remote Evaluation Protocol. Every answer is checked against the component
// schemas of the OFREP OpenAPI document (test/fixtures/ofrep-openapi.json, protocol v0.3), and the
// published server SDK with the OFREP provider reads boolean and object values through it.

const require = createRequire(import.meta.url);
const spec = require('../fixtures/ofrep-openapi.json') as { components: { schemas: Record<string, unknown> } };
const ajv = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv);
// The document's `codeDefaultFlag` is `{properties: {}}`, which every object matches, so its
// `oneOf` of value types could never hold exactly once. Its text says what it means: no `value`.
const schemas = { ...spec.components.schemas, codeDefaultFlag: { type: 'object', not: { required: ['value'] } } };
ajv.addSchema({ $id: 'ofrep', components: { ...spec.components, schemas } });
const check = (schema: string, value: unknown) => {
  const validate = ajv.getSchema(`ofrep#/components/schemas/${schema}`)!;
  assert.ok(validate(value), `${schema}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value).slice(0, 300)}`);
};

const post = (ctx: TestContext, url: string, headers: Record<string, string>, body?: string) =>
  ctx.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: body });

forEachDialect('OFREP', (ctx) => {
  let project: ProjectFixture;
  before(async () => {
    project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'checkout', enabled: true, payload: { variant: 'b', steps: 3 }, description: 'New checkout' });
    await createFlag(ctx(), project.key, { slug: 'kill-switch', enabled: false, expiredAt: '2027-01-01T00:00:00Z' });
  });

  it('evaluates one flag: value is enabled, STATIC, on/off, never DISABLED', async () => {
    const on = await post(ctx(), '/ofrep/v1/evaluate/flags/checkout', keys(project), '{"context":{"targetingKey":"u-1"}}');
    assert.equal(on.statusCode, 200);
    check('serverEvaluationSuccess', on.json());
    assert.deepEqual(on.json(), {
      key: 'checkout',
      value: true,
      reason: 'STATIC',
      variant: 'on',
      metadata: { description: 'New checkout', payload: '{"variant":"b","steps":3}' },
    });
    // A flag that is off is the value false, not DISABLED (which would make providers answer the default).
    const off = (await post(ctx(), '/ofrep/v1/evaluate/flags/kill-switch', keys(project), '{"context":{}}')).json();
    check('serverEvaluationSuccess', off);
    assert.equal(off.value, false);
    assert.equal(off.reason, 'STATIC');
    assert.equal(off.variant, 'off');
    assert.equal(off.metadata.expiredAt, '2027-01-01T00:00:00.000Z');
    // The payload is its own key; no payload means no value (the caller's default).
    const payload = (await post(ctx(), '/ofrep/v1/evaluate/flags/checkout:payload', keys(project), '{}')).json();
    check('serverEvaluationSuccess', payload);
    assert.deepEqual(payload.value, { variant: 'b', steps: 3 });
    const none = (await post(ctx(), '/ofrep/v1/evaluate/flags/kill-switch:payload', keys(project))).json();
    check('serverEvaluationSuccess', none);
    assert.equal('value' in none, false);
  });

  it('is lenient with the context and answers OFREP errors', async () => {
    for (const body of [undefined, '', '{}', '{"context":null}', '{"context":{"a":[1,{"b":2}]}}']) {
      const res = await post(ctx(), '/ofrep/v1/evaluate/flags/checkout', keys(project), body);
      assert.equal(res.statusCode, 200, String(body));
    }
    const noType = await ctx().app.inject({ method: 'POST', url: '/ofrep/v1/evaluate/flags/checkout', headers: keys(project) });
    assert.equal(noType.statusCode, 200);

    const missing = await post(ctx(), '/ofrep/v1/evaluate/flags/nope', keys(project), '{}');
    assert.equal(missing.statusCode, 404);
    check('flagNotFound', missing.json());
    assert.equal(missing.json().errorCode, 'FLAG_NOT_FOUND');

    const badContext = await post(ctx(), '/ofrep/v1/evaluate/flags/checkout', keys(project), '{"context":"x"}');
    assert.equal(badContext.statusCode, 400);
    check('evaluationFailure', badContext.json());
    assert.equal(badContext.json().errorCode, 'INVALID_CONTEXT');
    const notJson = await post(ctx(), '/ofrep/v1/evaluate/flags', keys(project), '{"context":');
    assert.equal(notJson.statusCode, 400);
    check('bulkEvaluationFailure', notJson.json());
    assert.equal(notJson.json().errorCode, 'PARSE_ERROR');

    assert.equal((await post(ctx(), '/ofrep/v1/evaluate/flags', {}, '{}')).statusCode, 401);
    assert.equal((await post(ctx(), '/ofrep/v1/evaluate/flags', { 'x-project-key': project.key }, '{}')).statusCode, 401);
    assert.equal((await post(ctx(), '/ofrep/v1/evaluate/flags', { 'x-project-key': project.key, 'x-environment-key': 'nope' }, '{}')).statusCode, 403);
    assert.equal((await post(ctx(), '/ofrep/v1/evaluate/flags/checkout', { 'x-project-key': 'nope', 'x-environment-key': 'nope' }, '{}')).statusCode, 403);
  });

  it('answers the bulk evaluation with an ETag, 304 on If-None-Match, and a relative event stream', async () => {
    const res = await post(ctx(), '/ofrep/v1/evaluate/flags', keys(project), '{"context":{"targetingKey":"u"}}');
    assert.equal(res.statusCode, 200);
    check('bulkEvaluationSuccess', res.json());
    const body = res.json() as {
      flags: Array<{ key: string; value?: unknown }>;
      eventStreams: Array<{ type: string; endpoint: { requestUri: string; origin?: string } }>;
    };
    assert.deepEqual(body.flags.map((f) => f.key).sort(), ['checkout', 'checkout:payload', 'kill-switch', 'kill-switch:payload']);
    assert.equal(body.eventStreams.length, 1);
    assert.equal(body.eventStreams[0]!.type, 'sse');
    assert.match(body.eventStreams[0]!.endpoint.requestUri, /^\/ofrep\/v1\/events\?stream=[\w-]+\.[\w-]{32}$/);
    assert.equal(body.eventStreams[0]!.endpoint.origin, undefined, 'never an empty origin');
    const etag = res.headers.etag as string;
    assert.match(etag, /^"[\w-]+"$/);
    const again = await post(ctx(), '/ofrep/v1/evaluate/flags', { ...keys(project), 'if-none-match': etag }, '{}');
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    // A change is a new ETag.
    await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/kill-switch`, { enabled: true });
    const changed = await post(ctx(), '/ofrep/v1/evaluate/flags', { ...keys(project), 'if-none-match': etag }, '{}');
    assert.equal(changed.statusCode, 200);
    assert.notEqual(changed.headers.etag, etag);
    await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/kill-switch`, { enabled: false });
  });

  it('reloads a snapshot when a refetch names a newer flagConfigEtag than it has', async () => {
    const envKey = project.environments[0]!.key;
    const bulk = async (query = '') => {
      const res = await post(ctx(), `/ofrep/v1/evaluate/flags${query}`, keys(project), '{}');
      return {
        etag: String(res.headers.etag),
        value: (res.json() as { flags: Array<{ key: string; value?: unknown }> }).flags.find((f) => f.key === 'kill-switch')!.value,
      };
    };
    const before = await bulk();
    const version = (await ctx().services.reads.get(project.key, envKey))!.version;
    assert.equal(before.value, false);
    // A change this instance has not been told of: another instance's write whose NOTIFY is still on its way.
    const env = await ctx().handle.db.selectFrom('environments').select('id').where('key', '=', envKey).executeTakeFirstOrThrow();
    await ctx()
      .handle.db.updateTable('flags')
      .set({ enabled: 1 as never, default_variant: 'on' })
      .where('environment_id', '=', env.id)
      .where('slug', '=', 'kill-switch')
      .execute();
    assert.equal((await bulk()).value, false, 'the warm snapshot still answers');
    assert.equal((await bulk(`?flagConfigEtag=${version}`)).value, false, 'the version the client names is this one');
    const fresh = await bulk('?flagConfigEtag=a-newer-version');
    assert.equal(fresh.value, true, 'reloaded for a newer version');
    assert.notEqual(fresh.etag, before.etag);
    await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${envKey}/flags/kill-switch`, { enabled: false });
  });

  it('allows browsers from any origin, with the headers providers send', async () => {
    const res = await ctx().app.inject({
      method: 'OPTIONS',
      url: '/ofrep/v1/evaluate/flags',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,if-none-match,x-project-key,x-environment-key',
      },
    });
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.match(String(res.headers['access-control-allow-methods']), /POST/);
    for (const h of ['content-type', 'if-none-match', 'x-project-key', 'x-environment-key'])
      assert.match(String(res.headers['access-control-allow-headers']).toLowerCase(), new RegExp(h));
    const actual = await post(ctx(), '/ofrep/v1/evaluate/flags', { ...keys(project), origin: 'https://app.example' }, '{}');
    assert.equal(actual.headers['access-control-allow-origin'], '*');
    assert.equal(actual.headers['access-control-expose-headers'], 'ETag');
  });

  it('serves the published OpenFeature server SDK through the OFREP provider', async () => {
    const port = freePort();
    await ctx().app.listen({ port, host: '127.0.0.1' });
    const provider = new OFREPProvider({ baseUrl: `http://127.0.0.1:${port}`, headers: [...Object.entries(keys(project))] as Array<[string, string]> });
    const domain = `flagpost-${ctx().dialect}`;
    await OpenFeature.setProviderAndWait(domain, provider);
    const client = OpenFeature.getClient(domain);
    assert.equal(await client.getBooleanValue('checkout', false), true);
    assert.equal(await client.getBooleanValue('kill-switch', true), false, 'an off flag is off, not the default');
    assert.deepEqual(await client.getObjectValue('checkout:payload', {}), { variant: 'b', steps: 3 });
    const details = await client.getBooleanDetails('missing-flag', true);
    assert.equal(details.value, true);
    assert.equal(details.errorCode, 'FLAG_NOT_FOUND');
    await OpenFeature.clearProviders();
  });
});

after(async () => {
  await OpenFeature.close();
});
