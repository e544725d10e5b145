import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { type EnvironmentFlags, FlagReadModel } from '../../src/evaluation/flag.read-model.ts';
import type { Flag } from '../../src/flags/flag.ts';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture, sampleDoc } from '../support/fixtures.ts';

const flag = (slug: string, enabled = true): Flag => ({
  id: `id-${slug}`,
  version: 1,
  projectId: 'p',
  environmentId: 'e1',
  slug,
  type: 'boolean',
  enabled,
  targeting: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: enabled ? 'on' : 'off', prerequisites: [], rules: [] },
  payload: null,
  expiredAt: null,
  description: '',
  isPreview: false,
  previewName: null,
  previewContent: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

describe('FlagReadModel', () => {
  it('loads an environment once and then answers from memory with the same serialized bodies', async () => {
    let loads = 0;
    const model = new FlagReadModel({
      async loadEnvironment() {
        loads++;
        return { environmentId: 'e1', flags: [flag('a')], segments: [] };
      },
    });
    const first = await model.get('p', 'e');
    const second = model.get('p', 'e');
    assert.equal(loads, 1);
    assert.ok(!(second instanceof Promise), 'a warm read is synchronous');
    assert.equal(second, first, 'the very same snapshot: no query and no serialization');
    assert.equal(second?.v1.single.get('a')?.body, '{"slug":"a","enabled":true,"payload":null,"expiredAt":null,"description":""}');
  });

  it('shares one load among concurrent first reads', async () => {
    let loads = 0;
    const model = new FlagReadModel({
      async loadEnvironment() {
        loads++;
        return { environmentId: 'e1', flags: [], segments: [] };
      },
    });
    await Promise.all([model.get('p', 'e'), model.get('p', 'e'), model.get('p', 'e')]);
    assert.equal(loads, 1);
  });

  it('does not keep a snapshot whose load overlapped a change', async () => {
    let release!: (env: EnvironmentFlags) => void;
    let enabled = false;
    const model = new FlagReadModel({
      loadEnvironment: () =>
        enabled ? Promise.resolve({ environmentId: 'e1', flags: [flag('a', true)], segments: [] }) : new Promise((resolve) => (release = resolve)),
    });
    const pending = model.get('p', 'e');
    enabled = true;
    model.apply({ kind: 'environment', environmentId: 'e1' });
    release({ environmentId: 'e1', flags: [flag('a', false)], segments: [] });
    await pending;
    const fresh = await model.get('p', 'e');
    assert.equal(JSON.parse(fresh!.v1.single.get('a')!.body).enabled, true);
  });

  it('remembers unknown keys until the set of keys changes', async () => {
    let known = false;
    const model = new FlagReadModel({
      loadEnvironment: async () => (known ? { environmentId: 'e1', flags: [], segments: [] } : undefined),
    });
    assert.equal(await model.get('p', 'e'), undefined);
    known = true;
    assert.equal(model.get('p', 'e'), undefined, 'remembered as unknown');
    model.apply({ kind: 'keys' });
    assert.ok(await model.get('p', 'e'));
  });
});

forEachDialect('read model invalidation by admin writes', (ctx) => {
  let project: ProjectFixture;
  const get = (url: string, envIndex = 0) => ctx().app.inject({ method: 'GET', url, headers: keys(project, envIndex) });
  const envKey = () => project.environments[0]!.key;

  before(async () => {
    project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'checkout', enabled: false });
  });

  it('sees a flag created after the snapshot was loaded', async () => {
    assert.equal((await get('/v1/flags')).json().flags.length, 1);
    await createFlag(ctx(), project.key, { slug: 'search', enabled: true });
    assert.deepEqual(
      (await get('/v1/flags')).json().flags.map((f: { slug: string }) => f.slug),
      ['search', 'checkout'],
    );
    assert.equal((await get('/v1/flags/search')).statusCode, 200);
  });

  it('sees an update in the answer right after the PATCH and changes the ETag', async () => {
    const before = await get('/v1/flags/checkout');
    const res = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${envKey()}/flags/checkout`, { enabled: true });
    assert.equal(res.statusCode, 200);
    const after = await get('/v1/flags/checkout');
    assert.equal(after.json().enabled, true);
    assert.notEqual(after.headers.etag, before.headers.etag);
  });

  it('sees preview content written after the snapshot was loaded', async () => {
    assert.deepEqual((await get('/v1/flags/preview')).json(), { flags: [] });
    const res = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${envKey()}/flags/checkout`, {
      isPreview: true,
      previewName: 'New checkout',
      previewContent: sampleDoc,
    });
    assert.equal(res.statusCode, 200);
    const preview = (await get('/v1/flags/preview')).json().flags;
    assert.equal(preview.length, 1);
    assert.match(preview[0].previewContent, /<strong>Try the &lt;new&gt; checkout<\/strong>/);
  });

  it('answers 404 for a deleted flag right after the DELETE, in every environment', async () => {
    assert.equal((await get('/v1/flags/search', 1)).statusCode, 200);
    assert.equal((await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/flags/search`)).statusCode, 204);
    assert.equal((await get('/v1/flags/search')).statusCode, 404);
    assert.equal((await get('/v1/flags/search', 1)).statusCode, 404);
  });

  it('serves a new environment and a new project right after they are created', async () => {
    const env = await ctx().admin('POST', `/admin/v1/projects/${project.key}/environments`, { name: 'qa' });
    assert.equal(env.statusCode, 201);
    const res = await ctx().app.inject({ method: 'GET', url: '/v1/flags', headers: { 'x-project-key': project.key, 'x-environment-key': env.json().key } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      res.json().flags.map((f: { slug: string; enabled: boolean }) => [f.slug, f.enabled]),
      [['checkout', false]],
    );

    const other = await createProject(ctx(), 'Blog');
    const list = await ctx().app.inject({ method: 'GET', url: '/v1/flags', headers: keys(other) });
    assert.deepEqual(list.json(), { flags: [] });
  });
});
