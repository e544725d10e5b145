import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { ResultsStore } from '../../src/experiments/index.ts';
import { compare, sampleRatioMismatch, summarize } from '../../src/experiments/statistics/index.ts';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

// Results of an experiment (issue 32) from events sent over POST /v1/track: per user from their first
// exposure and within the metric's window, the variant of the first exposure, and the statistics of the
// sums the database computed, checked against the statistics module fed with the same per-user values
// computed here by hand.

let offsetMs = 0;
const HOUR = 3_600_000;

forEachDialect(
  'Experiment results',
  (ctx) => {
    let project: ProjectFixture;
    const env = () => project.environments[0]!.key;
    const base = () => `/admin/v1/projects/${project.key}/environments/${env()}/experiments/checkout-test`;
    const send = async (events: unknown[]) => {
      const res = await ctx().app.inject({
        method: 'POST',
        url: '/v1/track',
        headers: { 'content-type': 'application/json', ...keys(project) },
        payload: JSON.stringify({ events }),
      });
      assert.equal(res.statusCode, 202, res.body);
    };
    const exposure = (user: string, variant: string) => ({ kind: 'exposure', flagKey: 'checkout', variant, targetingKey: user });
    const event = (user: string, name: string, value?: number) => ({ kind: 'track', name, targetingKey: user, ...(value === undefined ? {} : { value }) });

    before(async () => {
      project = await createProject(ctx(), 'Results');
      await createFlag(ctx(), project.key, {
        slug: 'checkout',
        type: 'string',
        variants: { control: 'old', treatment: 'new', other: 'x' },
        defaultVariant: 'control',
      });
      const rule = {
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
      assert.equal(
        (await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env()}/flags/checkout`, { state: 'ENABLED', rules: [rule] })).statusCode,
        200,
      );
      const metrics = `/admin/v1/projects/${project.key}/metrics`;
      for (const body of [
        { key: 'bought', name: 'Bought', event: 'purchase', type: 'proportion', direction: 'increase', windowHours: 1 },
        { key: 'revenue', name: 'Revenue', event: 'purchase', type: 'mean', direction: 'increase', windowHours: 72 },
        { key: 'aov', name: 'Order value', event: 'purchase', type: 'ratio', denominatorEvent: 'order', direction: 'increase' },
      ]) {
        assert.equal((await ctx().admin('POST', metrics, body)).statusCode, 201);
      }
      const created = await ctx().admin('POST', `/admin/v1/projects/${project.key}/environments/${env()}/experiments`, {
        key: 'checkout-test',
        name: 'Checkout',
        flagKey: 'checkout',
        controlVariant: 'control',
        metrics: ['bought', 'revenue'],
        guardrails: ['aov'],
      });
      assert.equal(created.statusCode, 201, created.body);
    });

    it('answers 409 for a draft: it has no results yet', async () => {
      const res = await ctx().admin('GET', `${base()}/results`);
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().message, 'Experiment checkout-test has not started: it has no results yet');
    });

    it('counts each user in the variant of their first exposure, within each metric window, and compares as the statistics module does', async () => {
      // Before the start: neither exposures nor events count.
      await send([exposure('c1', 'treatment'), event('c1', 'purchase', 100)]);
      offsetMs += 1000;
      assert.equal((await ctx().admin('POST', `${base()}/start`)).statusCode, 200);
      offsetMs += 1000;
      // A purchase before the user's first exposure does not count either.
      await send([event('c2', 'purchase', 50)]);
      offsetMs += 1000;
      await send([
        exposure('c1', 'control'),
        exposure('c2', 'control'),
        exposure('c3', 'control'),
        exposure('c4', 'control'),
        exposure('t1', 'treatment'),
        exposure('t2', 'treatment'),
        exposure('t3', 'treatment'),
        exposure('other', 'other'),
      ]);
      offsetMs += 1000;
      // t3 also sees control later: counted in treatment only, and reported.
      await send([
        exposure('t3', 'control'),
        event('c1', 'purchase', 10),
        event('c1', 'order', 1),
        event('c2', 'purchase'),
        event('c2', 'purchase'),
        event('c2', 'order', 2),
        event('t1', 'purchase', 30),
        event('t1', 'order', 1),
        event('t2', 'purchase', 20),
        event('t2', 'order', 1),
        event('t3', 'order', 1),
      ]);
      // Two hours later: outside `bought`'s one-hour window, inside `revenue`'s 72 hours.
      offsetMs += 2 * HOUR;
      await send([event('c3', 'purchase', 5), event('c3', 'order', 1), event('t3', 'purchase', 40)]);

      const res = await ctx().admin('GET', `${base()}/results`);
      assert.equal(res.statusCode, 200, res.body);
      const results = res.json();
      assert.equal(results.experiment, 'checkout-test');
      assert.equal(results.status, 'running');
      assert.deepEqual(results.users, { control: 4, treatment: 3 });
      assert.equal(results.multipleExposures, 1);
      assert.deepEqual(results.srm, sampleRatioMismatch([4, 3], [50, 50]));
      assert.deepEqual(
        results.metrics.map((m: { metric: string; guardrail: boolean }) => [m.metric, m.guardrail]),
        [
          ['bought', false],
          ['revenue', false],
          ['aov', true],
        ],
      );

      // Per-user values by hand: control c1..c4, treatment t1..t3.
      const bought = { control: [1, 1, 0, 0], treatment: [1, 1, 0] };
      const revenue = { control: [10, 2, 5, 0], treatment: [30, 20, 40] };
      const orders = { control: [1, 2, 1, 0], treatment: [1, 1, 1] };
      const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
      const sq = (xs: number[]) => sum(xs.map((x) => x * x));
      const proportion = (xs: number[]) => ({ kind: 'proportion' as const, n: xs.length, sum: sum(xs) });
      const mean = (xs: number[]) => ({ kind: 'mean' as const, n: xs.length, sum: sum(xs), sumSquares: sq(xs) });
      const ratio = (a: number[], b: number[]) => ({
        kind: 'ratio' as const,
        n: a.length,
        numeratorSum: sum(a),
        numeratorSumSquares: sq(a),
        denominatorSum: sum(b),
        denominatorSumSquares: sq(b),
        sumOfProducts: sum(a.map((x, i) => x * b[i]!)),
      });
      const expected = [
        [proportion(bought.control), proportion(bought.treatment)],
        [mean(revenue.control), mean(revenue.treatment)],
        [ratio(revenue.control, orders.control), ratio(revenue.treatment, orders.treatment)],
      ] as const;
      for (const [i, [control, treatment]] of expected.entries()) {
        const metric = results.metrics[i];
        assert.deepEqual(metric.variants, [
          { variant: 'control', ...summarize(control) },
          { variant: 'treatment', ...summarize(treatment) },
        ]);
        assert.deepEqual(metric.comparisons, [{ variant: 'treatment', baseline: 'control', ...compare(control, treatment, { direction: 'increase' }) }]);
      }

      const csv = await ctx().admin('GET', `${base()}/results.csv`);
      assert.equal(csv.statusCode, 200);
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      const lines = csv.body.trim().split('\r\n');
      assert.equal(
        lines[0],
        'metric,type,guardrail,variant,baseline,users,mean,stddev,relativeLift,ci95Low,ci95High,pValue,chanceToWin,sequentialCi95Low,sequentialCi95High,significant',
      );
      assert.equal(lines.length, 1 + 3 * 2);
      const revenueTreatment = lines[4]!.split(',');
      const comparison = results.metrics[1].comparisons[0];
      assert.deepEqual(revenueTreatment.slice(0, 6), ['revenue', 'mean', 'false', 'treatment', 'control', '3']);
      assert.equal(Number(revenueTreatment[8]), comparison.relativeLift);
    });

    it('sums the same in chunks of users as in one statement (SQLite reads in chunks between flag reads)', async () => {
      const experiment = await ctx().handle.db.selectFrom('experiments').selectAll().where('key', '=', 'checkout-test').executeTakeFirstOrThrow();
      const query = {
        experimentId: experiment.id,
        environmentId: experiment.environment_id,
        metrics: [
          { event: 'purchase', denominatorEvent: 'order', windowMs: 72 * HOUR },
          { event: 'purchase', denominatorEvent: null, windowMs: HOUR },
        ],
        endMs: null,
      };
      const whole = await new ResultsStore(ctx().dialect).sums(ctx().handle.db, query);
      for (const size of [1, 2, 3]) assert.deepEqual(await new ResultsStore(ctx().dialect, size).sums(ctx().handle.db, query), whole, `chunks of ${size}`);
      assert.equal(whole[0]!.get('control')!.users + whole[0]!.get('treatment')!.users, 7);
    });

    it('stops counting at the stop: events after it do not change the results', async () => {
      assert.equal((await ctx().admin('POST', `${base()}/stop`)).statusCode, 200);
      const before = (await ctx().admin('GET', `${base()}/results`)).json();
      offsetMs += 1000;
      await send([event('c4', 'purchase', 1000), exposure('new-user', 'treatment')]);
      const after = (await ctx().admin('GET', `${base()}/results`)).json();
      assert.equal(after.status, 'stopped');
      assert.deepEqual({ ...after, status: undefined }, { ...before, status: undefined });
    });
  },
  {},
  { clock: () => new Date(Date.now() + offsetMs) },
);
