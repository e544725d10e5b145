import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createApiKey, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

/** No answer may carry a stack trace or a driver's words. */
function assertCleanError(body: string, label: string): void {
  const json = JSON.parse(body);
  assert.equal(json.error, true, label);
  assert.equal(typeof json.message, 'string', label);
  for (const leak of ['at ', 'Error:', 'SQLITE', 'syntax', 'node_modules', 'relation', 'FST_']) {
    assert.ok(!json.message.includes(leak), `${label}: message leaks "${leak}": ${json.message}`);
  }
  assert.ok(!('stack' in json), label);
}

forEachDialect('bad input', (ctx) => {
  let project: ProjectFixture;
  let token: string;
  before(async () => {
    project = await createProject(ctx());
    token = await createApiKey(ctx(), project.key);
  });

  const flagPosts = ['/v1/flags/preview/feedback', '/v1/flags/code-refs'];
  const headers = () => ({ ...keys(project), 'x-api-key': token });

  it('answers malformed JSON and bodies of the wrong JSON type with a 400 JSON error', async () => {
    for (const url of flagPosts) {
      for (const payload of ['{', '{"a":}', '[]', '"text"', 'null', '42', 'true', '']) {
        const res = await ctx().app.inject({ method: 'POST', url, headers: { ...headers(), 'content-type': 'application/json' }, payload });
        assert.equal(res.statusCode, 400, `${url} ${payload}`);
        assertCleanError(res.body, `${url} ${payload}`);
        assert.equal(res.headers['cache-control'], 'no-store');
      }
    }
  });

  it('answers another content type with the generic 400 on the flag interface, 415 on the admin API', async () => {
    for (const url of flagPosts) {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
        const res = await ctx().app.inject({ method: 'POST', url, headers: { ...headers(), 'content-type': type }, payload: 'a=b' });
        assert.equal(res.statusCode, 400, `${url} ${type}`);
        assert.deepEqual(res.json(), { error: true, message: 'Something went wrong, please try again later.' });
      }
    }
    for (const type of ['application/xml', 'text/plain', 'text/plain; charset=utf-8']) {
      for (const [method, url] of [
        ['POST', '/admin/v1/projects'],
        ['PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/x`],
      ] as const) {
        const admin = await ctx().app.inject({
          method,
          url,
          headers: { authorization: 'Bearer test-admin-token-0123456789', 'content-type': type },
          payload: '{"name":"x"}',
        });
        assert.equal(admin.statusCode, 415, `${method} ${url} ${type}`);
        assert.deepEqual(admin.json(), { error: true, message: 'Unsupported Content-Type' });
      }
    }
  });

  it('treats key headers holding NUL as unknown keys on both engines, never a 500 (found by the fuzz run)', async () => {
    const nul = { 'x-project-key': 'a\u0000b', 'x-environment-key': project.environments[0]!.key };
    for (const url of ['/v1/flags', '/v1/flags/preview']) {
      const res = await ctx().app.inject({ method: 'GET', url, headers: nul });
      assert.equal(res.statusCode, 404, `${url}: ${res.body}`);
    }
    assert.equal((await ctx().app.inject({ method: 'GET', url: '/v1/flags/x', headers: nul })).json().enabled, false);
    const upload = await ctx().app.inject({
      method: 'POST',
      url: '/v1/flags/code-refs',
      headers: { ...nul, 'x-api-key': token, 'content-type': 'application/json' },
      payload: '{"branch":"main","projectName":"web","references":{}}',
    });
    assert.equal(upload.statusCode, 401);
  });

  it('answers a NUL byte in an admin query string or cursor with 400 on both engines (issue 8)', async () => {
    const form = await ctx().admin('POST', '/admin/v1/forms', { name: 'NUL' });
    const nulCursor = Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', 'a\u0000b'])).toString('base64url');
    for (const url of [
      `/admin/v1/projects/${project.key}/code-refs?slug=a%00b`,
      `/admin/v1/projects/${project.key}/code-refs?branch=%00`,
      `/admin/v1/forms/${form.json().key}/submissions?cursor=${nulCursor}`,
      `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/x/feedback?cursor=${nulCursor}`,
    ]) {
      const res = await ctx().admin('GET', url);
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assertCleanError(res.body, url);
    }
  });

  it('refuses a body over 1 MiB with 413 JSON and accepts one just under', async () => {
    const big = JSON.stringify({ flagKey: 'x', mood: 'HAPPY', rating: 3, metadata: { blob: 'x'.repeat(1024 * 1024) } });
    for (const url of flagPosts) {
      const res = await ctx().app.inject({ method: 'POST', url, headers: { ...headers(), 'content-type': 'application/json' }, payload: big });
      assert.equal(res.statusCode, 413, url);
      assert.deepEqual(res.json(), { error: true, message: 'Request body is too large' });
    }
    const filler = 'x'.repeat(1024 * 1024 - 200);
    const justUnder = JSON.stringify({ branch: 'b', projectName: 'p', references: { a: [{ filePath: 'f', lineNumber: 1, lineContent: 'c' }] }, pad: filler });
    assert.ok(Buffer.byteLength(justUnder) <= 1024 * 1024);
    const ok = await ctx().app.inject({
      method: 'POST',
      url: '/v1/flags/code-refs',
      headers: { ...headers(), 'content-type': 'application/json' },
      payload: justUnder,
    });
    assert.equal(ok.statusCode, 201);
  });

  it('answers unknown routes and wrong methods with a 404 JSON error', async () => {
    const cases: Array<[string, string]> = [
      ['GET', '/'],
      ['GET', '/v1'],
      ['GET', '/v2/flags'],
      ['DELETE', '/v1/flags/x'],
      ['PUT', '/v1/flags'],
      ['PATCH', '/v1/flags/preview'],
      ['GET', '/v1/flags/preview/feedback'],
      ['GET', '/v1/flags/code-refs/x/y'],
      ['POST', '/admin/v1/nothing'],
      ['GET', `/${'x'.repeat(5000)}`],
    ];
    for (const [method, url] of cases) {
      const res = await ctx().app.inject({ method: method as 'GET', url, headers: headers() });
      // Unknown admin paths ask for the admin token first.
      const expected = url.startsWith('/admin/') ? 401 : 404;
      assert.equal(res.statusCode, expected, `${method} ${url}`);
      assertCleanError(res.body, `${method} ${url}`);
    }
  });

  it('answers hostile values in the key headers without a 500', async () => {
    for (const value of ["' or 1=1 --", 'x'.repeat(8000), '%00', '../../etc/passwd', '\u00e9\u00e8']) {
      const res = await ctx().app.inject({
        method: 'GET',
        url: '/v1/flags',
        headers: { 'x-project-key': value, 'x-environment-key': value },
      });
      assert.equal(res.statusCode, 404, value.slice(0, 20));
      assertCleanError(res.body, value.slice(0, 20));
    }
  });

  it('never answers a client mistake with a 500 on the admin API', async () => {
    const urls = [`/admin/v1/projects/${project.key}/flags`, '/admin/v1/projects', `/admin/v1/projects/${project.key}/environments`];
    for (const url of urls) {
      for (const payload of ['{', '[]', 'null', '"x"', '{"name":{"$gt":""}}']) {
        const res = await ctx().app.inject({
          method: 'POST',
          url,
          headers: { authorization: 'Bearer test-admin-token-0123456789', 'content-type': 'application/json' },
          payload,
        });
        assert.equal(res.statusCode, 400, `${url} ${payload}`);
        assertCleanError(res.body, `${url} ${payload}`);
      }
    }
  });

  it('answers repeated or oversized query parameters on admin listings with 400', async () => {
    const env = project.environments[0]!.key;
    for (const url of [
      `/admin/v1/projects/${project.key}/code-refs?slug=a&slug=b`,
      `/admin/v1/projects/${project.key}/code-refs?branch=${'b'.repeat(300)}`,
      `/admin/v1/projects/${project.key}/environments/${env}/flags/x/feedback?limit=1&limit=2`,
      `/admin/v1/projects/${project.key}/environments/${env}/flags/x/feedback?cursor=a&cursor=b`,
    ]) {
      const res = await ctx().app.inject({ method: 'GET', url, headers: { authorization: 'Bearer test-admin-token-0123456789' } });
      assert.equal(res.statusCode, 400, url);
      assertCleanError(res.body, url);
    }
  });
});
