import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Flag } from '../../src/flags/flag.ts';
import { FlagStore } from '../../src/flags/flag.store.ts';
import { buildSnapshot } from '../../src/evaluation/flag.read-model.ts';
import { evaluateOfrepBulk, evaluateOfrepFlag } from '../../src/evaluation/ofrep.evaluation.ts';
import type { Rule, Segment } from '../../src/targeting/index.ts';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject } from '../support/fixtures.ts';

// A rebuild after a change compiles and serializes only what changed (docs/adr/0028): unchanged Flag
// objects keep their compiled form and OFREP entries, a changed segment recompiles exactly the flags
// that use it, and nothing derived from an older version of a flag or segment is ever answered.

const rule = (id: string, segments: string[], attribute = 'country', value = 'DE'): Rule => ({
  id,
  name: id,
  enabled: true,
  conditions: segments.length > 0 ? [] : [{ attribute, operator: 'equals', values: [value] }],
  segments,
  serve: { variant: 'on' },
});

const flag = (slug: string, rules: Rule[], description = ''): Flag => ({
  id: `id-${slug}`,
  version: 1,
  projectId: 'p',
  environmentId: 'e1',
  slug,
  type: 'boolean',
  enabled: false,
  targeting: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'off', prerequisites: [], rules },
  payload: null,
  expiredAt: null,
  description,
  isPreview: false,
  previewName: null,
  previewContent: null,
  createdAt: `2026-01-01T00:00:00.00${slug.length}Z`,
  updatedAt: '2026-01-01T00:00:00.000Z',
});

const segment = (key: string, plan: string): Segment => ({
  key,
  name: key,
  description: '',
  match: 'all',
  conditions: [{ attribute: 'plan', operator: 'equals', values: [plan] }],
});

describe('snapshot rebuild', () => {
  const usesBeta = flag('uses-beta', [rule('r', ['beta'])]);
  const usesPaid = flag('uses-paid', [rule('r', ['paid'])]);
  const byCountry = flag('by-country', [rule('r', [])]);
  const plain = flag('plain', []);
  const flags = [usesBeta, usesPaid, byCountry, plain];
  const first = buildSnapshot({ environmentId: 'e1', flags, segments: [segment('beta', 'pro'), segment('paid', 'team')] });

  it('keeps every compiled flag and OFREP entry when nothing changed, even with segments loaded again as new objects', () => {
    const again = buildSnapshot({ environmentId: 'e1', flags, segments: [segment('beta', 'pro'), segment('paid', 'team')] }, { previous: first });
    for (const f of flags) {
      assert.equal(again.compiled.compiledOf(f.slug), first.compiled.compiledOf(f.slug), f.slug);
      assert.equal(again.ofrep.entries.get(f.slug), first.ofrep.entries.get(f.slug), f.slug);
      assert.equal(again.ofrep.entries.get(`${f.slug}:payload`), first.ofrep.entries.get(`${f.slug}:payload`), f.slug);
    }
    assert.equal(again.version, first.version);
  });

  it('recompiles the flags that use a changed segment, and only those', () => {
    // Warm the outcome answers of the first snapshot, which must not leak into the next one.
    assert.equal(JSON.parse(evaluateOfrepFlag(first, 'uses-beta', { plan: 'pro' }).answer.body).value, true);
    const next = buildSnapshot({ environmentId: 'e1', flags, segments: [segment('beta', 'team'), segment('paid', 'team')] }, { previous: first });
    assert.notEqual(next.compiled.compiledOf('uses-beta'), first.compiled.compiledOf('uses-beta'));
    assert.notEqual(next.ofrep.entries.get('uses-beta'), first.ofrep.entries.get('uses-beta'));
    for (const slug of ['uses-paid', 'by-country', 'plain']) {
      assert.equal(next.compiled.compiledOf(slug), first.compiled.compiledOf(slug), slug);
      assert.equal(next.ofrep.entries.get(slug), first.ofrep.entries.get(slug), slug);
    }
    const value = (context: Record<string, unknown>) => JSON.parse(evaluateOfrepFlag(next, 'uses-beta', context).answer.body).value;
    assert.equal(value({ plan: 'pro' }), false, 'the old segment is not served');
    assert.equal(value({ plan: 'team' }), true);
    assert.notEqual(next.version, first.version);
  });

  it('recompiles a changed flag alone and answers its new rules, in single and bulk evaluations', () => {
    const bulkBefore = evaluateOfrepBulk(first, { country: 'FR' }).answer;
    const changed = flag('by-country', [rule('r', [], 'country', 'FR')]);
    const next = buildSnapshot(
      { environmentId: 'e1', flags: [usesBeta, usesPaid, changed, plain], segments: [segment('beta', 'pro'), segment('paid', 'team')] },
      { previous: first },
    );
    assert.notEqual(next.compiled.compiledOf('by-country'), first.compiled.compiledOf('by-country'));
    for (const slug of ['uses-beta', 'uses-paid', 'plain']) assert.equal(next.compiled.compiledOf(slug), first.compiled.compiledOf(slug), slug);
    assert.equal(JSON.parse(evaluateOfrepFlag(next, 'by-country', { country: 'FR' }).answer.body).value, true);
    const bulk = evaluateOfrepBulk(next, { country: 'FR' }).answer;
    const answered = JSON.parse(bulk.body).flags.find((f: { key: string }) => f.key === 'by-country');
    assert.equal(answered.value, true);
    assert.notEqual(bulk.etag, bulkBefore.etag, 'a changed answer has another ETag');
  });

  it('serializes a changed flag again even when its compiled form is kept (a new description)', () => {
    const described = flag('plain', [], 'Now with a description');
    const next = buildSnapshot(
      { environmentId: 'e1', flags: [usesBeta, usesPaid, byCountry, described], segments: [segment('beta', 'pro'), segment('paid', 'team')] },
      { previous: first },
    );
    assert.match(evaluateOfrepFlag(next, 'plain', {}).answer.body, /Now with a description/);
    assert.match(next.v1.single.get('plain')!.body, /Now with a description/);
    assert.match(next.v1.list.body, /Now with a description/);
    assert.doesNotMatch(first.v1.list.body, /Now with a description/);
  });

  it('gives bulk answers that differ only in the context different ETags, and alike answers the same one', () => {
    const a = evaluateOfrepBulk(first, { country: 'DE', targetingKey: 'u1' }).answer;
    const b = evaluateOfrepBulk(first, { country: 'DE', targetingKey: 'u2' }).answer;
    const c = evaluateOfrepBulk(first, { country: 'FR', targetingKey: 'u1' }).answer;
    assert.equal(a.body, b.body);
    assert.equal(a.etag, b.etag);
    assert.notEqual(a.body, c.body);
    assert.notEqual(a.etag, c.etag);
    assert.deepEqual(JSON.parse(a.body), JSON.parse(a.bytes.toString('utf8')));
  });
});

forEachDialect('FlagStore.listEnvironmentFlags with the previous flags', (ctx) => {
  it('hands back the same object for an unchanged row and a new one for a changed row', async () => {
    const project = await createProject(ctx(), 'Reuse');
    await createFlag(ctx(), project.key, { slug: 'kept' });
    await createFlag(ctx(), project.key, { slug: 'changed' });
    const env = project.environments[0]!;
    const environmentId = (await ctx().services.projects.getEnvironment(project.key, env.key)).environment.id;
    const store = new FlagStore();
    const db = ctx().handle.db;
    const before = await store.listEnvironmentFlags(db, environmentId);
    const res = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env.key}/flags/changed`, { description: 'new' });
    assert.equal(res.statusCode, 200, res.body);
    const after = await store.listEnvironmentFlags(db, environmentId, before);
    const bySlug = (list: Flag[], slug: string) => list.find((f) => f.slug === slug)!;
    assert.equal(bySlug(after, 'kept'), bySlug(before, 'kept'));
    assert.notEqual(bySlug(after, 'changed'), bySlug(before, 'changed'));
    assert.equal(bySlug(after, 'changed').description, 'new');
  });
});
