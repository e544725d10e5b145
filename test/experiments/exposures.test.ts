import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

// Server-side exposures (issue 32): while an experiment runs, single-flag OFREP evaluations that its split
// serves record exposures, on the fast path (a real socket) and on the Fastify route (inject) alike, and
// the answers stay byte for byte what they were without recording, in the style of
// test/evaluation/read-model-fast-path.test.ts. Bulk evaluations, contexts without a targeting key and answers of
// other rules record nothing.

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Headers that differ between two answers given one after the other. */
function comparable(answer: Answer): Answer {
  const headers = { ...answer.headers };
  delete headers.date;
  delete headers['x-request-id'];
  delete headers.connection;
  delete headers['keep-alive'];
  for (const name of ['ratelimit-reset', 'ratelimit-remaining']) if (headers[name] !== undefined) headers[name] = 'present';
  return { ...answer, headers };
}

forEachDialect('Server-side exposures on OFREP', (ctx) => {
  let project: ProjectFixture;
  let base: string;
  const env = () => project.environments[0]!.key;
  const experiment = () => `/admin/v1/projects/${project.key}/environments/${env()}/experiments/banner-test`;

  const viaSocket = async (path: string, context: unknown): Promise<Answer> => {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...keys(project) },
      body: JSON.stringify({ context }),
    });
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return comparable({ status: res.status, headers, body: await res.text() });
  };
  const viaRoute = async (path: string, context: unknown): Promise<Answer> => {
    const res = await ctx().app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/json', ...keys(project) },
      payload: JSON.stringify({ context }),
    });
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.headers)) headers[name] = String(value);
    return comparable({ status: res.statusCode, headers, body: res.body });
  };
  const users = Array.from({ length: 30 }, (_, i) => `user-${i}`);
  const askAll = async () => {
    const answers: Answer[] = [];
    // Half of the users through the fast path, half through the route: each path must record its own.
    for (const [i, user] of users.entries()) {
      answers.push(
        i % 2 === 0
          ? await viaSocket('/ofrep/v1/evaluate/flags/banner', { targetingKey: user })
          : await viaRoute('/ofrep/v1/evaluate/flags/banner', { targetingKey: user }),
      );
      answers.push(await viaRoute('/ofrep/v1/evaluate/flags/banner:payload', { targetingKey: `payload-${user}` }));
    }
    answers.push(await viaSocket('/ofrep/v1/evaluate/flags/banner', { targetingKey: 'vip-1', tier: 'gold' }));
    answers.push(await viaSocket('/ofrep/v1/evaluate/flags/banner', { country: 'DE' }));
    answers.push(await viaSocket('/ofrep/v1/evaluate/flags', { targetingKey: 'bulk-only' }));
    answers.push(await viaRoute('/ofrep/v1/evaluate/flags', { targetingKey: 'bulk-only-2' }));
    return answers;
  };

  before(async () => {
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}`;
    project = await createProject(ctx(), 'Exposures');
    await createFlag(ctx(), project.key, {
      slug: 'banner',
      type: 'string',
      variants: { control: 'blue', treatment: 'red' },
      defaultVariant: 'control',
      payload: { size: 1 },
    });
    const res = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env()}/flags/banner`, {
      state: 'ENABLED',
      rules: [
        { id: 'vip', name: 'VIPs', conditions: [{ attribute: 'tier', operator: 'equals', values: ['gold'] }], serve: { variant: 'treatment' } },
        {
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
        },
      ],
    });
    assert.equal(res.statusCode, 200, res.body);
    await ctx().admin('POST', `/admin/v1/projects/${project.key}/metrics`, {
      key: 'clicks',
      name: 'Clicks',
      event: 'click',
      type: 'proportion',
      direction: 'increase',
    });
    const created = await ctx().admin('POST', `/admin/v1/projects/${project.key}/environments/${env()}/experiments`, {
      key: 'banner-test',
      name: 'Banner',
      flagKey: 'banner',
      controlVariant: 'control',
      metrics: ['clicks'],
    });
    assert.equal(created.statusCode, 201, created.body);
  });

  after(async () => {
    await ctx().app.close();
  });

  it('answers byte for byte as without recording, and records exactly the evaluations the split served', async () => {
    const without = await askAll();
    assert.equal((await ctx().admin('POST', `${experiment()}/start`)).statusCode, 200);
    const recording = await askAll();
    assert.deepEqual(recording, without);
    assert.ok(without.every((a) => a.status === 200));

    await ctx().services.exposures.flush();
    const results = await ctx().admin('GET', `${experiment()}/results`);
    assert.equal(results.statusCode, 200, results.body);
    const counted = results.json().users as Record<string, number>;
    // Every user of the split, once, in the variant they were served; not the VIP (another rule), not the
    // context without a key, not the bulk evaluations; and nothing from before the start.
    assert.equal(counted.control! + counted.treatment!, users.length * 2);
    assert.ok(counted.control! > 0 && counted.treatment! > 0);
    const { rows } = await ctx()
      .handle.db.selectFrom('experiment_users')
      .select(['targeting_key', 'variant'])
      .execute()
      .then((r) => ({ rows: r }));
    assert.deepEqual(rows.map((r) => r.targeting_key).sort(), [...users, ...users.map((u) => `payload-${u}`)].sort());
    for (const row of rows.filter((r) => !r.targeting_key.startsWith('payload-'))) {
      const served = JSON.parse(without[users.indexOf(row.targeting_key) * 2]!.body) as { variant: string };
      assert.equal(row.variant, served.variant, row.targeting_key);
    }
    assert.equal(results.json().multipleExposures, 0);
  });

  it('records nothing once the experiment stops', async () => {
    assert.equal((await ctx().admin('POST', `${experiment()}/stop`)).statusCode, 200);
    await viaSocket('/ofrep/v1/evaluate/flags/banner', { targetingKey: 'late-user' });
    await ctx().services.exposures.flush();
    const late = await ctx().handle.db.selectFrom('exposures').select('targeting_key').where('targeting_key', '=', 'late-user').execute();
    assert.deepEqual(late, []);
  });
});
