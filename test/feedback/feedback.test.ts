import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

const GENERIC = 'Something went wrong, please try again later.';

forEachDialect('preview feedback', (ctx) => {
  let project: ProjectFixture;
  const post = (body: unknown, headers: Record<string, string> = keys(project)) =>
    ctx().app.inject({
      method: 'POST',
      url: '/v1/flags/preview/feedback',
      headers: { 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const count = async () =>
    Number(
      (
        await ctx()
          .handle.db.selectFrom('feedback')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const valid = { flagKey: 'beta', mood: 'HAPPY', rating: 4 };

  before(async () => {
    project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'beta', isPreview: true, previewName: 'Beta' });
    await createFlag(ctx(), project.key, { slug: 'plain', enabled: true });
  });

  it('stores feedback and answers 201 with success and feedbackId', async () => {
    const res = await post({ ...valid, description: 'Nice', metadata: { page: '/home', nested: { a: [1, 2] } } });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.equal(body.success, true);
    assert.equal(typeof body.feedbackId, 'string');
    const list = await ctx().admin('GET', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/beta/feedback`);
    assert.equal(list.statusCode, 200);
    const [stored] = list.json().feedback;
    assert.equal(stored.id, body.feedbackId);
    assert.deepEqual(
      { flagKey: stored.flagKey, mood: stored.mood, rating: stored.rating, description: stored.description, metadata: stored.metadata },
      { flagKey: 'beta', mood: 'HAPPY', rating: 4, description: 'Nice', metadata: { page: '/home', nested: { a: [1, 2] } } },
    );
  });

  it('accepts every mood, ratings 1 and 5, and a 2000-character description', async () => {
    for (const mood of ['VERY_SAD', 'SAD', 'NEUTRAL', 'HAPPY', 'VERY_HAPPY']) {
      assert.equal((await post({ ...valid, mood })).statusCode, 201, mood);
    }
    assert.equal((await post({ ...valid, rating: 1 })).statusCode, 201);
    assert.equal((await post({ ...valid, rating: 5 })).statusCode, 201);
    assert.equal((await post({ ...valid, description: 'd'.repeat(2000) })).statusCode, 201);
  });

  it('bounds metadata to 4096 characters of JSON (issue 8)', async () => {
    const before = await count();
    const res = await post({ ...valid, metadata: { note: 'x'.repeat(5000) } });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), {
      error: true,
      message: 'Something went wrong, please try again later.',
      details: [{ field: 'body.metadata', reason: 'must be at most 4096 characters as JSON' }],
    });
    assert.equal(await count(), before);
    assert.equal((await post({ ...valid, metadata: { note: 'x'.repeat(4000) } })).statusCode, 201);
  });

  it('ignores unknown top-level fields (D10)', async () => {
    assert.equal((await post({ ...valid, extra: 'ignored' })).statusCode, 201);
  });

  it('refuses invalid feedback with the generic 400 and stores nothing (D10)', async () => {
    const before = await count();
    const invalid: unknown[] = [
      { mood: 'HAPPY', rating: 4 },
      { flagKey: 'beta', rating: 4 },
      { flagKey: 'beta', mood: 'HAPPY' },
      { ...valid, mood: 'ANGRY' },
      { ...valid, mood: 'happy' },
      { ...valid, rating: 0 },
      { ...valid, rating: 6 },
      { ...valid, rating: 2.5 },
      { ...valid, rating: '4' },
      { ...valid, description: 'd'.repeat(2001) },
      { ...valid, description: 42 },
      { ...valid, metadata: 'text' },
      { ...valid, metadata: [1] },
      { ...valid, flagKey: 7 },
      [valid],
      'just text',
      null,
      42,
    ];
    for (const body of invalid) {
      const res = await post(JSON.stringify(body));
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.equal(res.json().error, true);
      assert.equal(res.json().message, GENERIC);
    }
    for (const raw of ['{"flagKey":', '', '{"__proto__":{"x":1},"flagKey":"beta","mood":"HAPPY","rating":4}']) {
      const res = await post(raw);
      assert.equal(res.statusCode, 400, raw);
      assert.equal(res.json().message, GENERIC);
    }
    assert.equal(await count(), before);
  });

  it('answers the preview-flag 404 for an unknown flag, a flag that is no preview, and unknown keys (D5, D10)', async () => {
    const before = await count();
    for (const [body, headers] of [
      [{ ...valid, flagKey: 'nope' }, keys(project)],
      [{ ...valid, flagKey: 'plain' }, keys(project)],
      [valid, { 'x-project-key': 'nope', 'x-environment-key': project.environments[0]!.key }],
      [valid, { 'x-project-key': project.key, 'x-environment-key': 'nope' }],
    ] as const) {
      const res = await post(body, headers);
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { error: true, message: `Preview flag with key ${body.flagKey} does not exist` });
    }
    assert.equal(await count(), before);
  });

  it('answers 400 with the D4 message without key headers', async () => {
    const res = await post(valid, {});
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().message, 'Missing required headers: x-project-key or x-environment-key');
  });

  it('pages through feedback newest first with a cursor', async () => {
    const env = project.environments[1]!;
    for (let i = 1; i <= 5; i++) await post({ ...valid, rating: i }, keys(project, 1));
    const url = `/admin/v1/projects/${project.key}/environments/${env.key}/flags/beta/feedback`;
    const first = (await ctx().admin('GET', `${url}?limit=2`)).json();
    assert.deepEqual(
      first.feedback.map((f: { rating: number }) => f.rating),
      [5, 4],
    );
    const second = (await ctx().admin('GET', `${url}?limit=2&cursor=${first.nextCursor}`)).json();
    assert.deepEqual(
      second.feedback.map((f: { rating: number }) => f.rating),
      [3, 2],
    );
    const third = (await ctx().admin('GET', `${url}?limit=2&cursor=${second.nextCursor}`)).json();
    assert.deepEqual(
      third.feedback.map((f: { rating: number }) => f.rating),
      [1],
    );
    assert.equal(third.nextCursor, null);
    for (const query of ['?limit=0', '?limit=201', '?limit=abc', '?cursor=garbage']) {
      assert.equal((await ctx().admin('GET', `${url}${query}`)).statusCode, 400, query);
    }
  });

  it('removes a flag’s feedback with the flag', async () => {
    await createFlag(ctx(), project.key, { slug: 'temp', isPreview: true });
    assert.equal((await post({ ...valid, flagKey: 'temp' })).statusCode, 201);
    await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/flags/temp`);
    await createFlag(ctx(), project.key, { slug: 'temp', isPreview: true });
    const list = await ctx().admin('GET', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/temp/feedback`);
    assert.deepEqual(list.json().feedback, []);
  });
});
