import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createForm, submitJson } from '../support/forms.ts';
import { createMember } from '../support/members.ts';

// Issue 34: a form's read-only token for integrations reads that form's submissions and nothing else.
forEachDialect('forms: read-only tokens', (ctx) => {
  const as = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    ctx().app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });

  it('makes a token shown once, lists it without its secret, keeps only its hash, and deletes it', async () => {
    const form = await createForm(ctx());
    const made = await ctx().admin('POST', `/admin/v1/forms/${form.key}/read-tokens`, { name: ' Zapier ' });
    assert.equal(made.statusCode, 201, made.body);
    assert.equal(made.headers['cache-control'], 'no-store');
    const { token, ...listed } = made.json();
    assert.match(token, /^fpf_[\w-]{40,}$/);
    assert.equal(listed.name, 'Zapier');
    assert.equal(listed.tokenPrefix, token.slice(0, 8));
    assert.equal(listed.lastUsedAt, null);
    const list = await ctx().admin('GET', `/admin/v1/forms/${form.key}/read-tokens`);
    assert.deepEqual(list.json(), { readTokens: [listed] });
    const stored = await ctx().handle.db.selectFrom('form_read_tokens').selectAll().execute();
    assert.ok(!JSON.stringify(stored).includes(token), 'the secret is not stored');
    // A refused request changes nothing, not even when the token was last used.
    assert.equal((await as(token, 'GET', `/admin/v1/forms/${form.key}`)).statusCode, 403);
    assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/read-tokens`)).json().readTokens[0].lastUsedAt, null);
    assert.equal((await as(token, 'GET', `/admin/v1/forms/${form.key}/submissions`)).statusCode, 200);
    assert.notEqual((await ctx().admin('GET', `/admin/v1/forms/${form.key}/read-tokens`)).json().readTokens[0].lastUsedAt, null);
    assert.equal((await ctx().admin('DELETE', `/admin/v1/forms/${form.key}/read-tokens/${listed.id}`)).statusCode, 204);
    assert.equal((await as(token, 'GET', `/admin/v1/forms/${form.key}/submissions`)).statusCode, 401);
    const again = await ctx().admin('DELETE', `/admin/v1/forms/${form.key}/read-tokens/${listed.id}`);
    assert.equal(again.statusCode, 404);
    assert.equal(again.json().message, `Read token ${listed.id} does not exist in form ${form.key}`);
    assert.equal((await ctx().admin('POST', `/admin/v1/forms/${form.key}/read-tokens`, { name: '' })).statusCode, 400);
    assert.equal((await ctx().admin('POST', '/admin/v1/forms/nope/read-tokens', { name: 'x' })).statusCode, 404);
  });

  it("reads its form's list, one submission and the exports; 403 for every other route and form; 401 when wrong", async () => {
    const form = await createForm(ctx());
    const other = await createForm(ctx());
    const id = (await submitJson(ctx(), form.key, { email: 'ann@example.test', message: 'hello' })).json().id as string;
    const otherId = (await submitJson(ctx(), other.key, { message: 'secret' })).json().id as string;
    const token = (await ctx().admin('POST', `/admin/v1/forms/${form.key}/read-tokens`, { name: 'CRM' })).json().token as string;

    const list = await as(token, 'GET', `/admin/v1/forms/${form.key}/submissions?q=hello`);
    assert.equal(list.statusCode, 200);
    assert.deepEqual(
      list.json().submissions.map((s: { id: string }) => s.id),
      [id],
    );
    const one = await as(token, 'GET', `/admin/v1/forms/${form.key}/submissions/${id}`);
    assert.equal(one.statusCode, 200);
    assert.equal(one.json().data.message, 'hello');
    assert.equal((await as(token, 'GET', `/admin/v1/forms/${form.key}/submissions.csv`)).statusCode, 200);
    const json = await as(token, 'GET', `/admin/v1/forms/${form.key}/submissions.json`);
    assert.equal(json.statusCode, 200);
    assert.equal(JSON.parse(json.body)[0].id, id);

    const forbidden: Array<['GET' | 'POST' | 'PATCH' | 'DELETE', string, unknown?]> = [
      ['GET', `/admin/v1/forms/${other.key}/submissions`],
      ['GET', `/admin/v1/forms/${other.key}/submissions/${otherId}`],
      ['GET', `/admin/v1/forms/${form.key}`],
      ['GET', '/admin/v1/forms'],
      ['PATCH', `/admin/v1/forms/${form.key}`, { name: 'Taken over' }],
      ['DELETE', `/admin/v1/forms/${form.key}/submissions/${id}`],
      ['PATCH', `/admin/v1/forms/${form.key}/submissions/${id}`, { spam: true }],
      ['GET', `/admin/v1/forms/${form.key}/read-tokens`],
      ['POST', `/admin/v1/forms/${form.key}/read-tokens`, { name: 'more' }],
      ['GET', `/admin/v1/forms/${form.key}/analytics`],
      ['POST', '/admin/v1/personal-data/export', { email: 'ann@example.test' }],
      ['GET', '/admin/v1/projects'],
      ['GET', '/admin/v1/audit'],
      ['GET', '/admin/v1/sessions/current'],
    ];
    for (const [method, url, body] of forbidden) {
      const res = await as(token, method, url, body);
      assert.equal(res.statusCode, 403, `${method} ${url}: ${res.body}`);
      assert.equal(res.json().message, "A form read token reads its form's submissions and nothing else");
    }
    assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}`)).json().name, 'Contact');
    assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${id}`)).statusCode, 200);

    for (const wrong of [`${token}x`, token.slice(0, -1), 'fpf_', `fpf_${'a'.repeat(300)}`]) {
      const res = await as(wrong, 'GET', `/admin/v1/forms/${form.key}/submissions`);
      assert.equal(res.statusCode, 401, wrong);
      assert.equal(res.json().message, 'Missing or invalid admin token');
    }
    // A deleted form takes its tokens with it.
    assert.equal((await ctx().admin('DELETE', `/admin/v1/forms/${form.key}`)).statusCode, 204);
    assert.equal((await as(token, 'GET', `/admin/v1/forms/${form.key}/submissions`)).statusCode, 401);
  });

  it('is managed by editors and owners, not viewers', async () => {
    const form = await createForm(ctx());
    await createMember(ctx(), 'owner@example.test', 'owner');
    const viewer = await createMember(ctx(), 'viewer@example.test', 'viewer');
    const editor = await createMember(ctx(), 'editor@example.test', 'editor');
    assert.equal((await viewer.call('POST', `/admin/v1/forms/${form.key}/read-tokens`, { name: 'v' })).statusCode, 403);
    assert.equal((await viewer.call('GET', `/admin/v1/forms/${form.key}/read-tokens`)).statusCode, 403);
    const made = await editor.call('POST', `/admin/v1/forms/${form.key}/read-tokens`, { name: 'e' });
    assert.equal(made.statusCode, 201, made.body);
    assert.equal((await viewer.call('DELETE', `/admin/v1/forms/${form.key}/read-tokens/${made.json().id}`)).statusCode, 403);
    assert.equal((await editor.call('DELETE', `/admin/v1/forms/${form.key}/read-tokens/${made.json().id}`)).statusCode, 204);
    const audit = await ctx().admin('GET', `/admin/v1/audit?entity=form&entityId=${form.key}`);
    const actions = audit.json().entries.map((e: { action: string }) => e.action);
    assert.ok(actions.includes('form.read_token_created') && actions.includes('form.read_token_deleted'), JSON.stringify(actions));
    assert.doesNotMatch(audit.body, /fpf_[\w-]{20}/, 'the audit log holds no secret');
  });
});
