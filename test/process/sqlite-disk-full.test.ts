import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTestContext, type TestContext } from '../support/context.ts';
import { createForm, submitJson, submitMultipart } from '../support/forms.ts';

// Issue 8, item 1 on SQLite: a full disk. `max_page_count` at the current page count makes SQLite
// refuse every write that needs a new page with SQLITE_FULL, as a full disk does. Writes must answer
// a JSON 503 with Retry-After (never a 2xx, never a 500), nothing refused may be stored, reads keep
// working, and the same process takes writes again once space is back.
describe('a full disk on SQLite', () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await createTestContext('sqlite');
  });
  after(async () => {
    await ctx.close();
  });

  const pragma = async (statement: string) => (await sql.raw<Record<string, number>>(`pragma ${statement}`).execute(ctx.handle.db)).rows[0];

  it('answers writes 503 with Retry-After, stores nothing, and recovers when space is back', async () => {
    const form = await createForm(ctx, { uploadsEnabled: true });
    const project = (await ctx.admin('POST', '/admin/v1/projects', { name: 'Shop' })).json() as { key: string };
    assert.equal((await submitJson(ctx, form.key, { name: 'before' })).statusCode, 200);

    const pages = (await pragma('page_count'))!.page_count!;
    await pragma(`max_page_count = ${pages}`);
    try {
      const big = 'x'.repeat(60_000);
      const refused = [
        await submitJson(ctx, form.key, { name: 'full', text: big }),
        await submitMultipart(ctx, form.key, [
          { name: 'name', value: 'full' },
          { name: 'file', filename: 'a.bin', content: Buffer.alloc(200_000, 7) },
        ]),
        await ctx.admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'full', payload: { big } }),
      ];
      for (const res of refused) {
        assert.equal(res.statusCode, 503, res.body);
        assert.equal(res.json().error, true);
        assert.ok(Number(res.headers['retry-after']) > 0, 'Retry-After');
        assert.doesNotMatch(res.body, /SQLITE|disk is full|at /);
      }
      // Reads do not need space.
      const list = await ctx.admin('GET', `/admin/v1/forms/${form.key}/submissions`);
      assert.equal(list.statusCode, 200);
      assert.equal(list.json().submissions.length, 1);
    } finally {
      await pragma('max_page_count = 1073741823');
    }

    assert.equal((await submitJson(ctx, form.key, { name: 'after', text: 'x'.repeat(60_000) })).statusCode, 200);
    const list = await ctx.admin('GET', `/admin/v1/forms/${form.key}/submissions`);
    assert.deepEqual(
      list.json().submissions.map((s: { data: { name: string } }) => s.data.name),
      ['after', 'before'],
    );
    assert.equal((await ctx.admin('GET', `/admin/v1/projects/${project.key}/flags`)).json().flags.length, 0);
  });
});
