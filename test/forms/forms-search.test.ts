import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createForm, listSubmissions, submitJson } from '../support/forms.ts';

// Issue 34: the submissions list searched on the server (full text, field filters, order), on both engines.
forEachDialect('forms: submissions search', (ctx) => {
  const ids = async (formKey: string, query: string) => (await listSubmissions(ctx(), formKey, query)).submissions.map((s) => s.data.n as number);
  const at = async (id: string, createdAt: string) => {
    await ctx().handle.db.updateTable('submissions').set({ created_at: createdAt }).where('id', '=', id).execute();
  };

  it('finds submissions by words of their field values, every word, as word starts, ignoring case and accents', async () => {
    const form = await createForm(ctx());
    await submitJson(ctx(), form.key, { n: 0, name: 'Anna Müller', message: 'Question about pricing' });
    await submitJson(ctx(), form.key, { n: 1, name: 'Bob', message: 'Pricing for teams?', topic: ['sales', 'support'] });
    await submitJson(ctx(), form.key, { n: 2, name: 'Zoë', email: 'zoe@example.org', age: 42 });
    assert.deepEqual(await ids(form.key, '?q=pricing'), [1, 0]);
    assert.deepEqual(await ids(form.key, '?q=PRIC'), [1, 0]);
    assert.deepEqual(await ids(form.key, '?q=pricing%20anna'), [0]);
    assert.deepEqual(await ids(form.key, '?q=muller'), [0]);
    assert.deepEqual(await ids(form.key, '?q=zoe'), [2]);
    assert.deepEqual(await ids(form.key, '?q=example.org'), [2]);
    assert.deepEqual(await ids(form.key, '?q=42'), [2]);
    assert.deepEqual(await ids(form.key, '?q=support'), [1]);
    assert.deepEqual(await ids(form.key, '?q=nobody'), []);
    // Field names are not field values.
    assert.deepEqual(await ids(form.key, '?q=message'), []);
    // An empty q filters nothing.
    assert.deepEqual(await ids(form.key, '?q=%20'), [2, 1, 0]);
  });

  it('answers hostile queries with 200 (FTS5 and tsquery syntax is never passed through)', async () => {
    const form = await createForm(ctx());
    await submitJson(ctx(), form.key, { n: 0, message: 'near or not' });
    const hostile = [
      '"',
      '"unbalanced',
      'a"b',
      '*',
      'NEAR(a b)',
      'body:x',
      'a OR',
      'AND',
      '(',
      ')',
      '^x',
      '-x',
      "'",
      "a & !b | c:* <-> 'd'",
      '\\',
      '%',
      '_',
      '\u0000',
      '😀',
      'x'.repeat(200),
      'a b c d e f g h i j k l m',
    ];
    for (const q of hostile) {
      const res = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions?q=${encodeURIComponent(q)}`);
      assert.ok(res.statusCode === 200 || res.statusCode === 400, `${JSON.stringify(q)}: ${res.statusCode} ${res.body}`);
      assert.equal(res.json().error === true, res.statusCode === 400);
    }
    assert.deepEqual(await ids(form.key, `?q=${encodeURIComponent('"near" OR*')}`), [0]);
    assert.deepEqual(await ids(form.key, `?q=${encodeURIComponent('"*:()')}`), []);
    assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions?q=${'x'.repeat(201)}`)).statusCode, 400);
  });

  it('filters by exact field values, several ANDed, any value of a repeated field, numbers and booleans as text', async () => {
    const form = await createForm(ctx());
    await submitJson(ctx(), form.key, { n: 0, topic: 'sales', country: 'DE' });
    await submitJson(ctx(), form.key, { n: 1, topic: 'support', country: 'DE', 'odd name': 'x' });
    await submitJson(ctx(), form.key, { n: 2, topic: ['sales', 'support'], country: 'FR', vip: true, seats: 10 });
    assert.deepEqual(await ids(form.key, '?field.topic=sales'), [2, 0]);
    assert.deepEqual(await ids(form.key, '?field.topic=sales&field.country=DE'), [0]);
    assert.deepEqual(await ids(form.key, '?field.topic=Sales'), []);
    assert.deepEqual(await ids(form.key, '?field.topic=sale'), []);
    assert.deepEqual(await ids(form.key, '?field.vip=true'), [2]);
    assert.deepEqual(await ids(form.key, '?field.seats=10'), [2]);
    assert.deepEqual(await ids(form.key, '?field.odd%20name=x'), [1]);
    assert.deepEqual(await ids(form.key, '?field.missing=x'), []);
    assert.deepEqual(await ids(form.key, '?field.n=1'), [1]);
    assert.deepEqual(await ids(form.key, '?field.country=DE&q=support'), [1]);
  });

  it('refuses field filters past five, with a bad name or given twice (400)', async () => {
    const form = await createForm(ctx());
    const list = (query: string) => ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions${query}`);
    assert.equal((await list('?field.a=1&field.b=1&field.c=1&field.d=1&field.e=1')).statusCode, 200);
    const six = await list('?field.a=1&field.b=1&field.c=1&field.d=1&field.e=1&field.f=1');
    assert.equal(six.statusCode, 400);
    assert.equal(six.json().details[0].field, 'querystring');
    for (const bad of [
      '?field.=1',
      '?field.a%22b=1',
      '?field.a%5Cb=1',
      `?field.${'a'.repeat(101)}=1`,
      '?field.a%0A=1',
      '?field.a=1&field.a=2',
      `?field.a=${'x'.repeat(1001)}`,
    ])
      assert.equal((await list(bad)).statusCode, 400, bad);
  });

  it('orders oldest first with order=asc and pages consistently in both orders, with since, until and filters', async () => {
    const form = await createForm(ctx());
    for (let n = 0; n < 7; n++) {
      const id = (await submitJson(ctx(), form.key, { n, kind: n % 2 === 0 ? 'even' : 'odd', text: 'hello world' })).json().id as string;
      // Two share a time: the id breaks the tie, in both orders.
      await at(id, `2026-11-0${Math.min(n, 5) + 1}T00:00:00.000Z`);
    }
    const pages = async (query: string) => {
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const page = await listSubmissions(ctx(), form.key, `${query}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...page.submissions.map((s) => s.data.n as number));
        cursor = page.nextCursor;
      } while (cursor);
      return seen;
    };
    const asc = await pages('?order=asc');
    assert.deepEqual(asc.slice(0, 5), [0, 1, 2, 3, 4]);
    assert.deepEqual([...asc.slice(5)].sort(), [5, 6]);
    assert.deepEqual(await pages('?order=desc'), [...asc].reverse());
    assert.deepEqual(
      await pages('?order=asc&q=hello&field.kind=even'),
      asc.filter((n) => n % 2 === 0),
    );
    assert.deepEqual(await pages('?q=world&since=2026-11-02T00:00:00Z&until=2026-11-05T00:00:00Z'), [3, 2, 1]);
    assert.deepEqual(await pages('?order=asc&q=world&since=2026-11-02T00:00:00Z&until=2026-11-05T00:00:00Z'), [1, 2, 3]);
    assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions?order=up`)).statusCode, 400);
  });

  it('keeps spam filterable beside the search', async () => {
    const form = await createForm(ctx(), { honeypot: '_trap' });
    await submitJson(ctx(), form.key, { n: 0, message: 'buy now' });
    await submitJson(ctx(), form.key, { n: 1, message: 'buy now', _trap: 'bot' });
    assert.deepEqual(await ids(form.key, '?q=buy&spam=true'), [1]);
    assert.deepEqual(await ids(form.key, '?q=buy&spam=false'), [0]);
    assert.deepEqual(await ids(form.key, '?q=buy&spam=all'), [1, 0]);
  });

  it('finds a submission no more once it is deleted, erased, past retention or its form is gone', async () => {
    const form = await createForm(ctx());
    const id = async (body: Record<string, unknown>) => (await submitJson(ctx(), form.key, body)).json().id as string;
    const deleted = await id({ n: 0, word: 'zebra' });
    await id({ n: 1, email: 'erase-me@example.test', word: 'zebra' });
    const old = await id({ n: 2, word: 'zebra' });
    await id({ n: 3, word: 'zebra' });
    assert.deepEqual(await ids(form.key, '?q=zebra'), [3, 2, 1, 0]);
    assert.equal((await ctx().admin('DELETE', `/admin/v1/forms/${form.key}/submissions/${deleted}`)).statusCode, 204);
    assert.deepEqual(await ids(form.key, '?q=zebra'), [3, 2, 1]);
    const erased = await ctx().admin('POST', '/admin/v1/personal-data/erase', { email: 'erase-me@example.test' });
    assert.equal(erased.statusCode, 200, erased.body);
    assert.deepEqual(await ids(form.key, '?q=zebra'), [3, 2]);
    assert.deepEqual(await ids(form.key, '?q=erase'), []);
    await at(old, new Date(Date.now() - 40 * 86_400_000).toISOString());
    assert.equal((await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { retentionDays: 30 })).statusCode, 200);
    await ctx().services.retention.runOnce();
    assert.deepEqual(await ids(form.key, '?q=zebra'), [3]);
    if (ctx().dialect === 'sqlite') {
      const rows = async () => (await ctx().handle.db.selectFrom('submission_search_rows').select('submission_id').execute()).map((r) => r.submission_id);
      assert.ok(!(await rows()).includes(deleted));
      assert.equal((await ctx().admin('DELETE', `/admin/v1/forms/${form.key}`)).statusCode, 204);
      const left = await ctx().handle.db.selectFrom('submissions').select('id').execute();
      assert.deepEqual(
        (await rows()).filter((r) => !left.some((s) => s.id === r)),
        [],
        'no search row outlives its submission',
      );
    }
  });
});
