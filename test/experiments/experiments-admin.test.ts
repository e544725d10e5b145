import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, type ProjectFixture } from '../support/fixtures.ts';

// Metrics and experiments over the admin API (issue 32): definitions, the draft -> running -> stopped
// life of an experiment, the 409s that keep results meaningful, audit entries and protected environments.

forEachDialect('Metrics and experiments (admin API)', (ctx) => {
  let project: ProjectFixture;
  const env = () => project.environments[0]!.key;
  const metrics = () => `/admin/v1/projects/${project.key}/metrics`;
  const experiments = (envKey = env()) => `/admin/v1/projects/${project.key}/environments/${envKey}/experiments`;
  const splitRule = {
    id: 'ab',
    name: 'A/B',
    conditions: [],
    serve: {
      split: {
        weights: [
          { variant: 'control', weight: 50 },
          { variant: 'treatment', weight: 50 },
        ],
      },
    },
  };

  before(async () => {
    project = await createProject(ctx(), 'Experiments');
    await createFlag(ctx(), project.key, { slug: 'checkout', type: 'string', variants: { control: 'old', treatment: 'new' }, defaultVariant: 'control' });
    await createFlag(ctx(), project.key, { slug: 'plain', type: 'string', variants: { control: 'old', treatment: 'new' }, defaultVariant: 'control' });
    for (const slug of ['checkout']) {
      const res = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env()}/flags/${slug}`, { state: 'ENABLED', rules: [splitRule] });
      assert.equal(res.statusCode, 200, res.body);
    }
  });

  it('creates, lists, reads, changes and refuses metrics as their types need', async () => {
    const created = await ctx().admin('POST', metrics(), {
      key: 'purchase-rate',
      name: 'Purchase rate',
      event: 'purchase',
      type: 'proportion',
      direction: 'increase',
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(
      { ...(created.json() as object), createdAt: undefined, updatedAt: undefined },
      {
        key: 'purchase-rate',
        name: 'Purchase rate',
        event: 'purchase',
        type: 'proportion',
        denominatorEvent: null,
        direction: 'increase',
        windowHours: 72,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.equal(
      (await ctx().admin('POST', metrics(), { key: 'revenue', name: 'Revenue', event: 'purchase', type: 'mean', direction: 'increase', windowHours: 24 }))
        .statusCode,
      201,
    );
    const ratio = await ctx().admin('POST', metrics(), { key: 'aov', name: 'Order value', event: 'purchase', type: 'ratio', direction: 'increase' });
    assert.equal(ratio.statusCode, 400);
    assert.deepEqual(ratio.json().details, [{ field: 'body.denominatorEvent', reason: 'a ratio metric needs denominatorEvent' }]);
    assert.equal(
      (
        await ctx().admin('POST', metrics(), {
          key: 'aov',
          name: 'Order value',
          event: 'purchase',
          type: 'ratio',
          denominatorEvent: 'order',
          direction: 'increase',
        })
      ).statusCode,
      201,
    );
    const again = await ctx().admin('POST', metrics(), { key: 'revenue', name: 'Again', event: 'x', type: 'mean', direction: 'increase' });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().message, `Metric with key revenue already exists in project ${project.key}`);
    assert.equal((await ctx().admin('POST', metrics(), { key: 'bad', name: 'x', event: 'x', type: 'median', direction: 'increase' })).statusCode, 400);
    const list = await ctx().admin('GET', metrics());
    assert.deepEqual(
      list.json().metrics.map((m: { key: string }) => m.key),
      ['aov', 'purchase-rate', 'revenue'],
    );
    const patched = await ctx().admin('PATCH', `${metrics()}/revenue`, { windowHours: 48, name: 'Revenue per user' });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual([patched.json().windowHours, patched.json().name], [48, 'Revenue per user']);
    assert.equal((await ctx().admin('PATCH', `${metrics()}/revenue`, { type: 'ratio' })).statusCode, 400, 'a ratio without a denominator');
    assert.equal((await ctx().admin('GET', `${metrics()}/nope`)).statusCode, 404);
  });

  it('runs an experiment from draft to running to stopped, with the split recorded at the start', async () => {
    const created = await ctx().admin('POST', experiments(), {
      key: 'new-checkout',
      name: 'New checkout',
      flagKey: 'checkout',
      controlVariant: 'control',
      metrics: ['purchase-rate', 'revenue'],
      guardrails: ['aov'],
      hypothesis: 'The new checkout sells more',
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().status, 'draft');
    assert.equal(created.json().split, null);
    const unknownMetric = await ctx().admin('POST', experiments(), { key: 'x', name: 'x', flagKey: 'checkout', controlVariant: 'control', metrics: ['nope'] });
    assert.equal(unknownMetric.statusCode, 400);
    assert.deepEqual(unknownMetric.json().details, [{ field: 'body.metrics[0]', reason: `no metric nope in project ${project.key}` }]);
    const badControl = await ctx().admin('POST', experiments(), { key: 'x', name: 'x', flagKey: 'checkout', controlVariant: 'blue', metrics: ['revenue'] });
    assert.equal(badControl.statusCode, 400);
    assert.equal(
      (await ctx().admin('POST', experiments(), { key: 'x', name: 'x', flagKey: 'nope', controlVariant: 'a', metrics: ['revenue'] })).statusCode,
      404,
    );

    const started = await ctx().admin('POST', `${experiments()}/new-checkout/start`);
    assert.equal(started.statusCode, 200, started.body);
    assert.equal(started.json().status, 'running');
    assert.deepEqual(started.json().split, { ruleId: 'ab', weights: splitRule.serve.split.weights });
    assert.ok(started.json().startedAt);
    assert.equal((await ctx().admin('POST', `${experiments()}/new-checkout/start`)).json().message, 'Experiment new-checkout is running: it cannot be started');

    const moved = await ctx().admin('PATCH', `${experiments()}/new-checkout`, { flagKey: 'plain' });
    assert.equal(moved.statusCode, 409);
    assert.equal(moved.json().message, 'Experiment new-checkout is running: flagKey can change only before it starts');
    const renamed = await ctx().admin('PATCH', `${experiments()}/new-checkout`, { name: 'New checkout (v2)', hypothesis: null });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.deepEqual([renamed.json().name, renamed.json().hypothesis], ['New checkout (v2)', null]);

    const inUse = await ctx().admin('DELETE', `${metrics()}/aov`);
    assert.equal(inUse.statusCode, 409);
    assert.equal(inUse.json().message, 'Metric aov is used by running experiments: new-checkout');
    assert.equal((await ctx().admin('DELETE', `${experiments()}/new-checkout`)).statusCode, 409);

    const listed = await ctx().admin('GET', experiments());
    assert.deepEqual(
      listed.json().experiments.map((x: { key: string; status: string }) => [x.key, x.status]),
      [['new-checkout', 'running']],
    );

    const stopped = await ctx().admin('POST', `${experiments()}/new-checkout/stop`);
    assert.equal(stopped.statusCode, 200, stopped.body);
    assert.equal(stopped.json().status, 'stopped');
    assert.ok(stopped.json().stoppedAt);
    assert.equal((await ctx().admin('DELETE', `${metrics()}/aov`)).statusCode, 204, 'no running experiment uses it now');

    const audit = await ctx().admin('GET', `/admin/v1/audit?entity=experiment`);
    assert.equal(audit.statusCode, 200, audit.body);
    const actions = audit.json().entries.map((e: { action: string }) => e.action);
    for (const action of ['experiment.created', 'experiment.started', 'experiment.updated', 'experiment.stopped']) assert.ok(actions.includes(action), action);
    const metricAudit = await ctx().admin('GET', `/admin/v1/audit?entity=metric`);
    assert.ok(metricAudit.json().entries.some((e: { action: string }) => e.action === 'metric.deleted'));

    // Every entry names its experiment or metric, not only its id (issue 31 item 12): a start or a stop
    // records the name unchanged, a rename the name before and after.
    assert.equal((await ctx().admin('PATCH', `${metrics()}/revenue`, { windowHours: 48 })).statusCode, 200);
    type Entry = { action: string; changes: Record<string, { before?: unknown; after?: unknown }> };
    const entries = [
      ...((await ctx().admin('GET', `/admin/v1/audit?entity=experiment`)).json().entries as Entry[]),
      ...((await ctx().admin('GET', `/admin/v1/audit?entity=metric`)).json().entries as Entry[]),
    ];
    const unnamed = entries.filter((e) => typeof (e.changes.name?.after ?? e.changes.name?.before) !== 'string').map((e) => e.action);
    assert.deepEqual(unnamed, [], 'entries that name their experiment or metric by id only');
    const byAction = (action: string) => entries.find((e) => e.action === action)!.changes.name;
    assert.deepEqual(byAction('experiment.started'), { before: 'New checkout', after: 'New checkout' });
    assert.deepEqual(byAction('experiment.updated'), { before: 'New checkout', after: 'New checkout (v2)' });
    assert.deepEqual(byAction('experiment.stopped'), { before: 'New checkout (v2)', after: 'New checkout (v2)' });
    assert.equal(typeof byAction('metric.updated')?.before, 'string');
  });

  it('answers 409 saying so when the flag has no split to measure, or several', async () => {
    assert.equal(
      (await ctx().admin('POST', experiments(), { key: 'plain-test', name: 'Plain', flagKey: 'plain', controlVariant: 'control', metrics: ['revenue'] }))
        .statusCode,
      201,
    );
    const res = await ctx().admin('POST', `${experiments()}/plain-test/start`);
    assert.equal(res.statusCode, 409);
    const envName = project.environments[0]!.name;
    assert.equal(
      res.json().message,
      `Flag plain has no rule that serves a split in ${envName}: an experiment measures a split, so add a rule with a split first`,
    );
    assert.equal((await ctx().admin('GET', `${experiments()}/plain-test`)).json().status, 'draft', 'a refused start changes nothing');
    const wrongRule = await ctx().admin('PATCH', `${experiments()}/plain-test`, { flagKey: 'checkout', ruleId: 'nope' });
    assert.equal(wrongRule.statusCode, 200, wrongRule.body);
    assert.equal(
      (await ctx().admin('POST', `${experiments()}/plain-test/start`)).json().message,
      'Rule nope of flag checkout does not exist or serves no split: an experiment measures a split',
    );
    assert.equal((await ctx().admin('DELETE', `${experiments()}/plain-test`)).statusCode, 204);
  });

  it('refuses writes to experiments of a protected environment unless an owner bypasses, and audits the bypass', async () => {
    const prod = project.environments[2]!;
    const protect = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${prod.key}`, { protected: true });
    assert.equal(protect.statusCode, 200, protect.body);
    await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${prod.key}/flags/checkout?bypassProtection=true`, {
      state: 'ENABLED',
      rules: [splitRule],
    });
    const body = { key: 'prod-test', name: 'Prod', flagKey: 'checkout', controlVariant: 'control', metrics: ['revenue'] };
    const refused = await ctx().admin('POST', experiments(prod.key), body);
    assert.equal(refused.statusCode, 409);
    assert.match(refused.json().message, /is protected: change requests do not carry experiments/);
    assert.equal((await ctx().admin('GET', experiments(prod.key))).json().experiments.length, 0);
    assert.equal((await ctx().admin('POST', `${experiments(prod.key)}?bypassProtection=true`, body)).statusCode, 201);
    assert.equal((await ctx().admin('POST', `${experiments(prod.key)}/prod-test/start`)).statusCode, 409);
    const started = await ctx().admin('POST', `${experiments(prod.key)}/prod-test/start?bypassProtection=true`);
    assert.equal(started.statusCode, 200, started.body);
    const audit = await ctx().admin('GET', `/admin/v1/audit?entity=experiment`);
    const entry = audit
      .json()
      .entries.find((e: { action: string; environmentKey: string }) => e.action === 'experiment.started' && e.environmentKey === prod.key);
    assert.deepEqual(entry.changes.protectionBypassed, { after: true });
  });
});
