import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys } from '../support/fixtures.ts';

forEachDialect('smoke', (ctx) => {
  it('serves a flag created through the admin API', async () => {
    const project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'checkout', enabled: true, description: 'New checkout' });
    const res = await ctx().app.inject({ method: 'GET', url: '/v1/flags/checkout', headers: keys(project) });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { slug: 'checkout', enabled: true, payload: null, expiredAt: null, description: 'New checkout' });
  });
});
