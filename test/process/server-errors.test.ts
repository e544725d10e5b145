import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createApiKey, createProject, keys } from '../support/fixtures.ts';

const GENERIC = 'Something went wrong, please try again later.';

// With the database gone, every endpoint must still answer the specification's error object:
// 400 on the flag endpoints, 500 on GET /flags/preview, 503 on /healthz; never a driver message.
forEachDialect('server errors', (ctx) => {
  it('answers the specification’s statuses and generic text when the database fails', async () => {
    const project = await createProject(ctx());
    const token = await createApiKey(ctx(), project.key);
    await ctx().handle.db.destroy();
    const headers = keys(project, 1);
    const json = { 'content-type': 'application/json' };
    const cases: Array<[string, string, number, unknown?, Record<string, string>?]> = [
      ['GET', '/v1/flags/x', 400],
      ['GET', '/v1/flags', 400],
      ['GET', '/v1/flags/preview', 500],
      ['POST', '/v1/flags/preview/feedback', 400, { flagKey: 'x', mood: 'SAD', rating: 1 }, json],
      ['POST', '/v1/flags/code-refs', 400, { branch: 'b', projectName: 'p', references: {} }, { ...json, 'x-api-key': token }],
    ];
    for (const [method, url, status, body, extra] of cases) {
      const res = await ctx().app.inject({
        method: method as 'GET',
        url,
        headers: { ...headers, ...extra },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
      assert.equal(res.statusCode, status, `${method} ${url}`);
      assert.deepEqual(res.json(), { error: true, message: GENERIC }, `${method} ${url}`);
      assert.equal(res.headers['cache-control'], 'no-store');
    }
    const admin = await ctx().admin('GET', '/admin/v1/projects');
    assert.equal(admin.statusCode, 500);
    assert.deepEqual(admin.json(), { error: true, message: GENERIC });
    const health = await ctx().app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(health.statusCode, 503);
    assert.equal(health.json().error, true);
  });
});
