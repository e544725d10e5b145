import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { before, it } from 'node:test';
import { promisify } from 'node:util';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, type ProjectFixture } from '../support/fixtures.ts';
import { ROOT } from '../support/process.ts';

// Issue 32's "Done when", as the README walks a newcomer through it: a flag with a 50/50 split, an
// experiment with a proportion metric, the example script (the OpenFeature server SDK with
// @flagpost/openfeature, run as a user runs it: `node examples/checkout-experiment.mjs`) evaluating and
// tracking for 2,000 simulated users, and results that say the treatment won, agreeing with the counts.

const run = promisify(execFile);

forEachDialect('an experiment measured through @flagpost/openfeature', (ctx) => {
  let project: ProjectFixture;
  let baseUrl: string;
  const env = () => project.environments[0]!.key;
  const experiments = () => `/admin/v1/projects/${project.key}/environments/${env()}/experiments`;

  before(async () => {
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
    project = await createProject(ctx(), 'Measured shop');
    await createFlag(ctx(), project.key, { slug: 'checkout', enabled: false });
    const split = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env()}/flags/checkout`, {
      rules: [
        {
          id: 'half',
          name: 'Half and half',
          enabled: true,
          conditions: [],
          segments: [],
          serve: {
            split: {
              bucketing: 'flagd-fractional-v2',
              weights: [
                { variant: 'off', weight: 50 },
                { variant: 'on', weight: 50 },
              ],
            },
          },
        },
      ],
    });
    assert.equal(split.statusCode, 200, split.body);
    const metric = await ctx().admin('POST', `/admin/v1/projects/${project.key}/metrics`, {
      key: 'purchase-rate',
      name: 'purchase rate',
      event: 'purchase',
      type: 'proportion',
      direction: 'increase',
    });
    assert.equal(metric.statusCode, 201, metric.body);
    const experiment = await ctx().admin('POST', experiments(), {
      key: 'new-checkout',
      name: 'New checkout',
      flagKey: 'checkout',
      controlVariant: 'off',
      metrics: ['purchase-rate'],
    });
    assert.equal(experiment.statusCode, 201, experiment.body);
    const started = await ctx().admin('POST', `${experiments()}/new-checkout/start`);
    assert.equal(started.statusCode, 200, started.body);
  });

  it('says the treatment won after 2,000 users evaluated and tracked through the OpenFeature provider', { timeout: 120_000 }, async () => {
    const { stdout } = await run(process.execPath, [path.join(ROOT, 'examples', 'checkout-experiment.mjs')], {
      cwd: ROOT,
      env: { ...process.env, FLAGPOST_URL: baseUrl, PROJECT_KEY: project.key, ENVIRONMENT_KEY: env() },
    });
    const served = JSON.parse(/served: (.*)/.exec(stdout)![1]!) as Record<string, number>;
    assert.equal(served.on! + served.off!, 2000, stdout);

    // Events are durable once /v1/track answered 202, and server-side exposures are written within a short
    // interval: read until every user is counted.
    let results: Record<string, any> = {};
    for (let i = 0; i < 100; i++) {
      const res = await ctx().admin('GET', `${experiments()}/new-checkout/results`);
      assert.equal(res.statusCode, 200, res.body);
      results = res.json();
      if ((results.users.on ?? 0) + (results.users.off ?? 0) === 2000) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(results.users, served);
    assert.equal(results.multipleExposures, 0);
    assert.equal(results.srm.mismatch, false);
    const [purchase] = results.metrics;
    assert.equal(purchase.metric, 'purchase-rate');
    const [comparison] = purchase.comparisons;
    assert.equal(comparison.variant, 'on');
    assert.equal(comparison.baseline, 'off');
    assert.ok(comparison.relativeLift > 0, JSON.stringify(comparison));
    assert.equal(comparison.significant, true, JSON.stringify(comparison));
    assert.ok(comparison.ci95[0] > 0, JSON.stringify(comparison));
    assert.ok(comparison.chanceToWin > 0.95, JSON.stringify(comparison));

    const csv = await ctx().admin('GET', `${experiments()}/new-checkout/results.csv`);
    assert.equal(csv.statusCode, 200);
    assert.match(csv.headers['content-type'] as string, /^text\/csv/);
    assert.match(csv.body, /purchase-rate/);
  });
});
