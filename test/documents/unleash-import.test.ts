import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, type ProjectFixture } from '../support/fixtures.ts';

// Issue 21, migration from Unleash: an admin export with two environments, segments, variants with
// payloads, strategy variants, a dependency and what cannot be carried over, imported through the admin
// API into a new project and into an existing one. The client specification (unleash-spec.test.ts)
// judges the semantics; this suite the format, the environments, the merge and the refusals.

type Json = Record<string, any>;

const EXPORT = {
  features: [
    { name: 'new-checkout', description: 'The new checkout', type: 'release', project: 'default' },
    { name: 'banner', description: '', type: 'experiment', project: 'default' },
    { name: 'legacy', type: 'kill-switch', project: 'default' },
    { name: 'child', type: 'release', project: 'default' },
  ],
  featureStrategies: [
    {
      id: 's1',
      featureName: 'new-checkout',
      environment: 'production',
      name: 'flexibleRollout',
      parameters: { rollout: '30', stickiness: 'userId', groupId: 'new-checkout' },
      constraints: [{ contextName: 'country', operator: 'IN', values: ['DE', 'FR'] }],
      segments: [1],
      sortOrder: 1,
    },
    { id: 's2', featureName: 'new-checkout', environment: 'development', name: 'default', parameters: {}, constraints: [], sortOrder: 0 },
    {
      id: 's3',
      featureName: 'banner',
      environment: 'production',
      name: 'default',
      parameters: { groupId: 'banner' },
      variants: [
        { name: 'blue', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{"color":"#00f"}' } },
        { name: 'red', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{"color":"#f00"}' } },
      ],
    },
    { id: 's4', featureName: 'legacy', environment: 'production', name: 'applicationHostname', parameters: { hostNames: 'web-1' } },
    { id: 's5', featureName: 'child', environment: 'production', name: 'default', parameters: {}, disabled: false },
  ],
  featureEnvironments: [
    { featureName: 'new-checkout', environment: 'production', enabled: true, variants: [] },
    { featureName: 'new-checkout', environment: 'development', enabled: true, variants: [] },
    { featureName: 'banner', environment: 'production', enabled: true, variants: [] },
    { featureName: 'banner', environment: 'development', enabled: false, variants: [] },
    { featureName: 'legacy', environment: 'production', enabled: true },
    { featureName: 'child', environment: 'production', enabled: true },
  ],
  segments: [
    { id: 1, name: 'Beta testers', constraints: [{ contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@example.com'], caseInsensitive: true }] },
  ],
  dependencies: [{ feature: 'child', dependencies: [{ feature: 'new-checkout' }] }],
};

forEachDialect('Unleash import', (ctx) => {
  let imported: Json;
  let project: ProjectFixture;
  const ofrep = async (p: ProjectFixture, envName: string, key: string, context: Json) => {
    const env = p.environments.find((e) => e.name === envName)!;
    const res = await ctx().app.inject({
      method: 'POST',
      url: `/ofrep/v1/evaluate/flags/${key}`,
      headers: { 'x-project-key': p.key, 'x-environment-key': env.key, 'content-type': 'application/json' },
      payload: JSON.stringify({ context }),
    });
    return res.json() as Json;
  };

  before(async () => {
    const res = await ctx().admin('POST', '/admin/v1/imports/unleash', { export: EXPORT, projectName: 'From Unleash' });
    assert.equal(res.statusCode, 200, res.body);
    imported = res.json();
    project = (await ctx().admin('GET', `/admin/v1/projects/${imported.projectKey}`)).json();
  });

  it('creates the project with the export environments, flags, segments and a dependency', async () => {
    assert.deepEqual(
      project.environments.map((e) => e.name),
      ['production', 'development'],
    );
    const doc = (await ctx().admin('GET', `/admin/v1/projects/${project.key}/document`)).json();
    assert.deepEqual(Object.keys(doc.flags), ['banner', 'child', 'legacy', 'new-checkout']);
    assert.equal(doc.flags.banner.type, 'object');
    assert.deepEqual(doc.flags.banner.environments.production.variants, { blue: { color: '#00f' }, red: { color: '#f00' } });
    assert.equal(doc.flags['new-checkout'].type, 'boolean');
    assert.deepEqual(doc.segments['Beta-testers'], {
      name: 'Beta testers',
      match: 'all',
      conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@example.com'], caseInsensitive: true }],
    });
    assert.deepEqual(doc.flags.child.environments.production.prerequisites, [{ flag: 'new-checkout', variants: ['on'] }]);
    assert.equal(doc.flags['new-checkout'].environments.development.defaultVariant, 'off');
    assert.equal(doc.flags['new-checkout'].environments.production.rules[0].segments[0], 'Beta-testers');
    assert.equal(doc.flags.banner.environments.development.state, 'DISABLED');
  });

  it('lists what it could not carry over', () => {
    assert.deepEqual(
      imported.notCarried.map((n: Json) => `${n.feature} ${n.environment} ${n.item}`),
      ['legacy production strategy applicationHostname'],
    );
  });

  it('evaluates as Unleash: a 30 % rollout by userId inside a segment and a constraint, variants by bucket', async () => {
    let inRollout = 0;
    const colors = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const answer = await ofrep(project, 'production', 'new-checkout', { targetingKey: `user-${i}`, country: 'DE', email: `U${i}@EXAMPLE.com` });
      if (answer.value === true) inRollout++;
      const banner = await ofrep(project, 'production', 'banner', { targetingKey: `user-${i}` });
      colors.add(banner.variant);
      const child = await ofrep(project, 'production', 'child', { targetingKey: `user-${i}`, country: 'DE', email: `u${i}@example.com` });
      assert.equal(child.value, answer.value, 'the child follows its parent');
    }
    assert.ok(inRollout > 35 && inRollout < 85, `${inRollout} of 200 in a 30 % rollout`);
    assert.deepEqual([...colors].sort(), ['blue', 'red']);
    assert.equal((await ofrep(project, 'production', 'new-checkout', { targetingKey: 'user-1', country: 'US', email: 'a@example.com' })).value, false);
    assert.equal((await ofrep(project, 'development', 'new-checkout', {})).value, true);
    assert.equal((await ofrep(project, 'production', 'legacy', {})).value, false);
  });

  it('merges into an existing project: its other flags and environments stay, imported flags are replaced', async () => {
    const target = await createProject(ctx(), 'Existing');
    await createFlag(ctx(), target.key, { slug: 'own-flag', enabled: true });
    const dry = await ctx().admin('POST', '/admin/v1/imports/unleash', { export: EXPORT, projectKey: target.key, dryRun: true });
    assert.equal(dry.statusCode, 200, dry.body);
    assert.ok(dry.json().changes.some((c: Json) => c.kind === 'flag' && c.action === 'create' && c.key === 'new-checkout'));
    assert.ok(!('new-checkout' in (await ctx().admin('GET', `/admin/v1/projects/${target.key}/document`)).json().flags), 'a dry run writes nothing');
    const res = await ctx().admin('POST', '/admin/v1/imports/unleash', { export: EXPORT, projectKey: target.key });
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(!res.json().changes.some((c: Json) => c.action === 'delete'), 'an import deletes nothing');
    const doc = (await ctx().admin('GET', `/admin/v1/projects/${target.key}/document`)).json();
    assert.deepEqual(doc.environments, ['development', 'staging', 'production']);
    assert.ok('own-flag' in doc.flags);
    assert.deepEqual(doc.flags['own-flag'].environments.production, { variants: { on: true, off: false }, defaultVariant: 'on' }, 'kept as it was');
    assert.deepEqual(doc.flags['new-checkout'].environments.staging, { variants: { on: true, off: false }, defaultVariant: 'off' });
    const again = await ctx().admin('POST', '/admin/v1/imports/unleash', { export: EXPORT, projectKey: target.key });
    assert.deepEqual(again.json().changes, [], 'importing the same export again changes nothing');
  });

  it('a client state imports into the environment named, and a malformed export is a 400 naming where', async () => {
    const state = { version: 2, features: [{ name: 'simple', enabled: true, strategies: [{ name: 'userWithId', parameters: { userIds: 'ann, bob' } }] }] };
    const res = await ctx().admin('POST', '/admin/v1/imports/unleash', { export: state, environment: 'live', projectName: 'State' });
    assert.equal(res.statusCode, 200, res.body);
    const p = (await ctx().admin('GET', `/admin/v1/projects/${res.json().projectKey}`)).json() as ProjectFixture;
    assert.deepEqual(
      p.environments.map((e) => e.name),
      ['live'],
    );
    assert.equal((await ofrep(p, 'live', 'simple', { targetingKey: 'bob' })).value, true);
    assert.equal((await ofrep(p, 'live', 'simple', { targetingKey: 'eve' })).value, false);

    const before = (await ctx().admin('GET', '/admin/v1/projects')).json().projects.length;
    const bad = await ctx().admin('POST', '/admin/v1/imports/unleash', {
      export: { features: [{ name: 'x' }], featureStrategies: [{ featureName: 'x', name: 'default', constraints: 'nope' }] },
    });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.equal(bad.json().message, 'Invalid Unleash export at /featureStrategies/0/constraints: must be an array');
    assert.equal(bad.json().details[0].field, 'body.export.featureStrategies.0.constraints');
    const unknown = await ctx().admin('POST', '/admin/v1/imports/unleash', { export: { something: true } });
    assert.equal(unknown.statusCode, 400, unknown.body);
    assert.equal((await ctx().admin('GET', '/admin/v1/projects')).json().projects.length, before, 'nothing was created');
  });
});
