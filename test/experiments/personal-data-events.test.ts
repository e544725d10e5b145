import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

// Issue 32 with issue 12: the personal-data export and erase find and remove a person's experiment events
// (exposures, tracked events and their experiment_users rows) by targeting key: the e-mail address of
// `{"email": ...}`, or the key of `{"targetingKey": ...}` for keys that are not addresses. Other people's
// events stay.

forEachDialect('personal data: experiment events', (ctx) => {
  let project: ProjectFixture;
  const env = () => project.environments[0]!.key;
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
  const count = async (table: 'exposures' | 'tracked_events' | 'experiment_users', key: string) =>
    (await ctx().handle.db.selectFrom(table).select('targeting_key').where('targeting_key', '=', key).execute()).length;
  const counts = async (key: string) => [await count('exposures', key), await count('tracked_events', key), await count('experiment_users', key)];

  before(async () => {
    project = await createProject(ctx(), 'Personal events');
    await createFlag(ctx(), project.key, { slug: 'checkout', type: 'string', variants: { control: 'old', treatment: 'new' }, defaultVariant: 'control' });
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
    const flagPath = `/admin/v1/projects/${project.key}/environments/${env()}/flags/checkout`;
    assert.equal((await ctx().admin('PATCH', flagPath, { state: 'ENABLED', rules: [rule] })).statusCode, 200);
    const metrics = `/admin/v1/projects/${project.key}/metrics`;
    assert.equal(
      (await ctx().admin('POST', metrics, { key: 'bought', name: 'Bought', event: 'purchase', type: 'proportion', direction: 'increase' })).statusCode,
      201,
    );
    const experiments = `/admin/v1/projects/${project.key}/environments/${env()}/experiments`;
    const created = await ctx().admin('POST', experiments, {
      key: 'checkout-test',
      name: 'Checkout',
      flagKey: 'checkout',
      controlVariant: 'control',
      metrics: ['bought'],
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal((await ctx().admin('POST', `${experiments}/checkout-test/start`)).statusCode, 200);
  });

  it('exports and erases the events whose targeting key is the address, and nobody else’s', async () => {
    await send([
      exposure('ada@example.com', 'treatment'),
      event('ada@example.com', 'purchase', 12.5),
      exposure('grace@example.com', 'control'),
      event('grace@example.com', 'purchase', 3),
    ]);
    assert.deepEqual(await counts('ada@example.com'), [1, 1, 1]);

    const exported = await ctx().admin('POST', '/admin/v1/personal-data/export', { email: 'ada@example.com' });
    assert.equal(exported.statusCode, 200, exported.body);
    const events = exported.json().events as { exposures: Array<{ flagKey: string; variant: string }>; tracked: Array<{ name: string; value: number }> };
    assert.deepEqual(
      events.exposures.map((e) => [e.flagKey, e.variant]),
      [['checkout', 'treatment']],
    );
    assert.deepEqual(
      events.tracked.map((e) => [e.name, e.value]),
      [['purchase', 12.5]],
    );

    const erased = await ctx().admin('POST', '/admin/v1/personal-data/erase', { email: 'Ada@Example.com' });
    assert.equal(erased.statusCode, 200, erased.body);
    assert.equal(erased.json().eventsDeleted, 3, 'the exposure, the tracked event and the experiment user');
    assert.deepEqual(await counts('ada@example.com'), [0, 0, 0]);
    assert.deepEqual(await counts('grace@example.com'), [1, 1, 1], "someone else's events stay");
    const again = await ctx().admin('POST', '/admin/v1/personal-data/export', { email: 'ada@example.com' });
    assert.deepEqual(again.json().events, { exposures: [], tracked: [] });
  });

  it('takes a targeting key that is not an address, exactly as given', async () => {
    await send([exposure('user-42', 'control'), event('user-42', 'purchase'), exposure('USER-42', 'treatment')]);
    const exported = await ctx().admin('POST', '/admin/v1/personal-data/export', { targetingKey: 'user-42' });
    assert.equal(exported.statusCode, 200, exported.body);
    assert.equal(exported.json().targetingKey, 'user-42');
    assert.deepEqual(exported.json().submissions, []);
    assert.equal(exported.json().events.exposures.length, 1);
    assert.equal(exported.json().events.tracked.length, 1);

    const erased = await ctx().admin('POST', '/admin/v1/personal-data/erase', { targetingKey: 'user-42' });
    assert.equal(erased.statusCode, 200, erased.body);
    assert.deepEqual([erased.json().deleted, erased.json().eventsDeleted], [0, 3]);
    assert.deepEqual(await counts('user-42'), [0, 0, 0]);
    assert.deepEqual(await counts('USER-42'), [1, 0, 1], 'another key stays');
  });

  it('refuses a body with neither or both, and changes nothing', async () => {
    await send([exposure('linus', 'control')]);
    for (const body of [{}, { email: 'linus@example.com', targetingKey: 'linus' }, { targetingKey: '' }]) {
      const res = await ctx().admin('POST', '/admin/v1/personal-data/erase', body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.equal(res.json().error, true);
    }
    assert.deepEqual(await counts('linus'), [1, 0, 1]);
  });
});
