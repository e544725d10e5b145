import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys } from '../support/fixtures.ts';
import { createForm, submitJson } from '../support/forms.ts';

// Issue 9: what the dashboard needed that the admin API lacked, added to the API: marking a
// submission as spam or not, submission counts in the form list, and a feedback summary.

forEachDialect('admin API for the dashboard', (ctx) => {
  it('marks a submission as spam and back, and the spam filter follows', async () => {
    const form = await createForm(ctx());
    const id = (await submitJson(ctx(), form.key, { email: 'ada@example.com' })).json().id as string;
    const url = `/admin/v1/forms/${form.key}/submissions/${id}`;
    const marked = await ctx().admin('PATCH', url, { spam: true });
    assert.equal(marked.statusCode, 200, marked.body);
    assert.equal(marked.json().spam, true);
    assert.deepEqual(marked.json().data, { email: 'ada@example.com' });
    assert.ok(Array.isArray(marked.json().deliveries));
    const spamOnly = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions?spam=true`);
    assert.deepEqual(
      spamOnly.json().submissions.map((s: { id: string }) => s.id),
      [id],
    );
    assert.equal((await ctx().admin('PATCH', url, { spam: false })).json().spam, false);
    assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions?spam=true`)).json().submissions.length, 0);

    for (const body of [{}, { spam: 'yes' }, { spam: true, data: {} }]) {
      const res = await ctx().admin('PATCH', url, body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
    }
    const missing = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}/submissions/01J0000000000000000000000`, { spam: true });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().message, `Submission 01J0000000000000000000000 does not exist in form ${form.key}`);
  });

  it('exports CSV and JSON without spam unless asked (issue 12)', async () => {
    const form = await createForm(ctx(), { uploadsEnabled: true });
    const kept = (await submitJson(ctx(), form.key, { email: 'ada@example.com' })).json().id as string;
    const spam = (await submitJson(ctx(), form.key, { email: 'bot@example.com', _trap: 'x' })).json().id as string;
    const csv = async (query = '') => (await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions.csv${query}`)).body;
    assert.match(await csv(), new RegExp(kept));
    assert.doesNotMatch(await csv(), new RegExp(spam));
    assert.match(await csv('?spam=all'), new RegExp(spam));
    assert.doesNotMatch(await csv('?spam=true'), new RegExp(kept));
    const json = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions.json`);
    assert.equal(json.statusCode, 200);
    assert.match(String(json.headers['content-type']), /^application\/json/);
    assert.match(String(json.headers['content-disposition']), /^attachment; filename="[\w-]+-submissions\.json"/);
    const items = JSON.parse(json.body) as Array<{ id: string; spam: boolean; data: unknown; files: unknown[]; meta: { ip: string | null } }>;
    assert.deepEqual(
      items.map((i) => i.id),
      [kept],
    );
    assert.deepEqual(items[0]!.data, { email: 'ada@example.com' });
    assert.equal(items[0]!.meta.ip, '127.0.0.1');
    const all = JSON.parse((await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions.json?spam=all`)).body) as Array<{ id: string; spam: boolean }>;
    assert.deepEqual(
      all.map((i) => [i.id, i.spam]),
      [
        [spam, true],
        [kept, false],
      ],
    );
    const empty = await createForm(ctx());
    assert.deepEqual(JSON.parse((await ctx().admin('GET', `/admin/v1/forms/${empty.key}/submissions.json`)).body), []);
    assert.equal((await ctx().admin('GET', '/admin/v1/forms/nope/submissions.json')).statusCode, 404);
  });

  it('lists forms with their submission and spam counts', async () => {
    const busy = await createForm(ctx(), { name: 'Busy' });
    const quiet = await createForm(ctx(), { name: 'Quiet' });
    for (let i = 0; i < 3; i++) await submitJson(ctx(), busy.key, { n: i });
    await submitJson(ctx(), busy.key, { n: 9, _trap: 'bot' });
    const forms = (await ctx().admin('GET', '/admin/v1/forms')).json().forms as Array<{ key: string; submissionCount: number; spamCount: number }>;
    const of = (key: string) => forms.find((f) => f.key === key)!;
    assert.deepEqual([of(busy.key).submissionCount, of(busy.key).spamCount], [4, 1]);
    assert.deepEqual([of(quiet.key).submissionCount, of(quiet.key).spamCount], [0, 0]);
  });

  it("summarises a flag's feedback over all pages", async () => {
    const project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'beta', isPreview: true, previewName: 'Beta' });
    const env = project.environments[0]!.key;
    const url = `/admin/v1/projects/${project.key}/environments/${env}/flags/beta/feedback?limit=1`;
    const empty = (await ctx().admin('GET', url)).json();
    assert.deepEqual(empty.summary, { total: 0, averageRating: null, moods: { VERY_SAD: 0, SAD: 0, NEUTRAL: 0, HAPPY: 0, VERY_HAPPY: 0 } });
    for (const [mood, rating] of [
      ['HAPPY', 5],
      ['HAPPY', 4],
      ['SAD', 1],
    ] as const) {
      const res = await ctx().app.inject({
        method: 'POST',
        url: '/v1/flags/preview/feedback',
        headers: { ...keys(project), 'content-type': 'application/json' },
        payload: JSON.stringify({ flagKey: 'beta', mood, rating }),
      });
      assert.equal(res.statusCode, 201);
    }
    const page = (await ctx().admin('GET', url)).json();
    assert.equal(page.feedback.length, 1);
    assert.deepEqual(page.summary, { total: 3, averageRating: 3.33, moods: { VERY_SAD: 0, SAD: 1, NEUTRAL: 0, HAPPY: 2, VERY_HAPPY: 0 } });
  });
});
