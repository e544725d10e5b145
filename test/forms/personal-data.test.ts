import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createForm, submitJson, submitMultipart } from '../support/forms.ts';

// Issue 12: access and erasure requests. A person's submissions across three forms are found by their
// e-mail address in any field and any letter case, exported with their files listed, and deleted with
// their files and deliveries; submissions of other people, and addresses that merely contain theirs,
// are untouched.

forEachDialect('personal data: access and erasure requests', (ctx) => {
  it("finds, exports and erases one person's submissions across forms, and nothing else", async () => {
    const [contact, newsletter, jobs] = [
      await createForm(ctx(), { name: 'Contact' }),
      await createForm(ctx(), { name: 'Newsletter' }),
      await createForm(ctx(), { name: 'Jobs', uploadsEnabled: true }),
    ];
    const id = async (res: Promise<{ json(): { id: string } }>) => (await res).json().id;
    const hers = [
      await id(submitJson(ctx(), contact.key, { email: 'ada@example.com', message: 'Hello' })),
      await id(submitJson(ctx(), newsletter.key, { address: 'Ada@Example.COM' })),
      await id(submitJson(ctx(), contact.key, { message: 'Please write to me at ada@example.com, thanks', tags: ['x'] })),
      await id(
        submitMultipart(ctx(), jobs.key, [
          { name: 'contact', value: 'ada@example.com' },
          { name: 'cv', filename: 'cv.pdf', content: '%PDF' },
        ]) as never,
      ),
    ];
    const others = [
      await id(submitJson(ctx(), contact.key, { email: 'grace@example.com', note: 'not ada' })),
      await id(submitJson(ctx(), newsletter.key, { email: 'xada@example.com' })),
      await id(submitJson(ctx(), jobs.key, { email: 'ada@example.com.evil.test' })),
      await id(submitJson(ctx(), contact.key, { email: 'ada_example.com' })),
    ];

    const exported = await ctx().admin('POST', '/admin/v1/personal-data/export', { email: 'ADA@example.com' });
    assert.equal(exported.statusCode, 200, exported.body);
    assert.equal(exported.headers['cache-control'], 'no-store');
    const found = exported.json().submissions as Array<{ id: string; form: { key: string; name: string }; files: Array<{ name: string }> }>;
    assert.deepEqual(found.map((s) => s.id).sort(), [...hers].sort());
    assert.deepEqual(new Set(found.map((s) => s.form.name)), new Set(['Contact', 'Newsletter', 'Jobs']));
    assert.deepEqual(
      found.flatMap((s) => s.files.map((f) => f.name)),
      ['cv.pdf'],
    );

    const erased = await ctx().admin('POST', '/admin/v1/personal-data/erase', { email: 'ada@example.com' });
    assert.equal(erased.statusCode, 200);
    assert.equal(erased.json().deleted, 4);
    assert.deepEqual([...erased.json().submissionIds].sort(), [...hers].sort());
    for (const [form, sid] of [
      [contact.key, hers[0]],
      [jobs.key, hers[3]],
    ] as const) {
      assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form}/submissions/${sid}`)).statusCode, 404);
    }
    const files = await ctx().handle.db.selectFrom('submission_files').select('id').execute();
    assert.equal(files.length, 0, 'the file went with its submission');
    const left = [contact.key, newsletter.key, jobs.key];
    const remaining: string[] = [];
    for (const key of left)
      remaining.push(...(await ctx().admin('GET', `/admin/v1/forms/${key}/submissions`)).json().submissions.map((s: { id: string }) => s.id));
    assert.deepEqual(remaining.sort(), [...others].sort(), "everyone else's submissions stay");
    assert.deepEqual((await ctx().admin('POST', '/admin/v1/personal-data/export', { email: 'ada@example.com' })).json().submissions, []);
  });

  it('refuses what is not an e-mail address; SQL wildcards in an address match nobody', async () => {
    for (const email of ['', 'ada', 'a b@c', '%@%']) {
      const res = await ctx().admin('POST', '/admin/v1/personal-data/erase', { email });
      if (email === '%@%') {
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().deleted, 0, 'no field holds the address %@%');
      } else assert.equal(res.statusCode, 400, email);
    }
  });
  it('matches whole addresses only: a character allowed before @ makes another address, on every engine', async () => {
    const form = await createForm(ctx(), { name: 'Look-alikes' });
    const submit = async (email: string) => (await submitJson(ctx(), form.key, { email })).json().id as string;
    // Every RFC 5322 atext symbol and the dot, before the address: each makes someone else's address.
    const lookAlikes: string[] = [];
    for (const symbol of "!#$%&'*+-/=?^_`{|}~.") lookAlikes.push(await submit(`o${symbol}brien@example.com`));
    lookAlikes.push(await submit('Obrien@example.com'), await submit('9brien@example.com'), await submit('ébrien@example.com'));
    lookAlikes.push(await submit('brien@example.com.evil.test'), await submit('brien@example.com-mail.test'), await submit('brien@example.com_x'));
    const his = [await submit('Brien@Example.com'), await submit('write to brien@example.com, please')];

    const erased = await ctx().admin('POST', '/admin/v1/personal-data/erase', { email: 'brien@example.com' });
    assert.equal(erased.statusCode, 200);
    assert.deepEqual([...erased.json().submissionIds].sort(), [...his].sort());
    const left = (await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions?limit=100`)).json().submissions.map((s: { id: string }) => s.id);
    assert.deepEqual([...left].sort(), [...lookAlikes].sort());
  });

  it('folds letter case the same way on every engine: Unicode, composed or not', async () => {
    const form = await createForm(ctx(), { name: 'Unicode' });
    const submit = async (email: string) => (await submitJson(ctx(), form.key, { email })).json().id as string;
    const ada = [await submit('ÄDA@example.com'), await submit('A\u0308da@example.com'), await submit('äda@EXAMPLE.com')];
    const kate = [await submit('\u212Aate@example.com')];
    const others = [await submit('ada@example.com'), await submit('xäda@example.com')];
    const found = async (email: string) =>
      ((await ctx().admin('POST', '/admin/v1/personal-data/export', { email })).json().submissions as Array<{ id: string }>).map((s) => s.id).sort();
    assert.deepEqual(await found('äda@example.com'), [...ada].sort());
    assert.deepEqual(await found('ÄDA@EXAMPLE.COM'), [...ada].sort());
    assert.deepEqual(await found('kate@example.com'), kate);
    assert.deepEqual(await found('ada@example.com'), [others[0]]);
  });

  it('records exports and erasures in the audit log for owners, with a fingerprint of the address, not the address', async () => {
    const form = await createForm(ctx(), { name: 'Audited' });
    const id = (await submitJson(ctx(), form.key, { email: 'linus@example.com' })).json().id as string;
    assert.equal((await ctx().admin('POST', '/admin/v1/personal-data/export', { email: 'Linus@Example.com' })).statusCode, 200);
    assert.equal((await ctx().admin('POST', '/admin/v1/personal-data/erase', { email: 'linus@example.com' })).statusCode, 200);
    const fingerprint = `sha256:${createHash('sha256').update('linus@example.com').digest('hex')}`;
    const entries = (await ctx().admin('GET', `/admin/v1/audit?entity=personal_data&entityId=${fingerprint}`)).json().entries as Array<{
      action: string;
      actor: { type: string };
      changes: Record<string, { before?: unknown; after?: unknown }>;
    }>;
    assert.deepEqual(
      entries.map((e) => [e.action, e.actor.type, e.changes]),
      [
        ['personal_data.erased', 'admin_token', { submissions: { before: [id] } }],
        ['personal_data.exported', 'admin_token', { submissions: { after: [id] } }],
      ],
    );
    assert.doesNotMatch(JSON.stringify(entries), /linus/i);
  });
});
