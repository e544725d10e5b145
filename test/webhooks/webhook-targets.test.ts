import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createProject, type ProjectFixture } from '../support/fixtures.ts';

// Issue 29 item 15: a project webhook is refused at creation when FLAGPOST_WEBHOOK_TARGETS (here the
// default, `public`) could never let its deliveries through, as a form's webhook is. No request leaves:
// every URL is an IP literal or localhost, refused before anything is sent.

forEachDialect('project webhook targets under FLAGPOST_WEBHOOK_TARGETS=public (issue 29)', (ctx) => {
  let project: ProjectFixture;
  before(async () => {
    project = await createProject(ctx(), 'Targets');
  });

  it('refuses loopback, private and tunnelled addresses at creation, and writes nothing', async () => {
    for (const url of [
      'http://127.0.0.1:9/hook',
      'http://localhost:9/hook',
      'http://[::1]:9/hook',
      'http://10.0.0.5/hook',
      'http://169.254.169.254/latest',
      'http://[::7f00:1]/hook',
      'http://[2002:7f00:1::]/hook',
      'http://[2001:0:a9fe:a9fe::1]/hook',
    ]) {
      const res = await ctx().admin('POST', `/admin/v1/projects/${project.key}/webhooks`, { url });
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assert.equal(res.json().message, 'Invalid request');
      assert.equal(res.json().details[0].field, 'body.url');
      assert.match(res.json().details[0].reason, /FLAGPOST_WEBHOOK_TARGETS=public/);
    }
    const list = await ctx().admin('GET', `/admin/v1/projects/${project.key}/webhooks`);
    assert.deepEqual(list.json().webhooks, []);
  });
});
