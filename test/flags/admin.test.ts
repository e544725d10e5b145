import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ADMIN_TOKEN, forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys } from '../support/fixtures.ts';

forEachDialect('admin API', (ctx) => {
  it('refuses every admin route without a valid bearer token (401 JSON)', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-wrong-token', 'Basic abc', 'Bearer']) {
      const res = await ctx().app.inject({
        method: 'GET',
        url: '/admin/v1/projects',
        headers: authorization ? { authorization } : {},
      });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { error: true, message: 'Missing or invalid admin token' });
    }
    const post = await ctx().app.inject({ method: 'POST', url: '/admin/v1/projects', payload: { name: 'x' } });
    assert.equal(post.statusCode, 401);
    const list = await ctx().admin('GET', '/admin/v1/projects');
    assert.equal(list.json().projects.length, 0, 'the refused POST created nothing');
  });

  it('creates a project with development, staging and production', async () => {
    const res = await ctx().admin('POST', '/admin/v1/projects', { name: 'Shop' });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.equal(body.name, 'Shop');
    assert.equal(typeof body.key, 'string');
    assert.deepEqual(
      body.environments.map((e: { name: string }) => e.name),
      ['development', 'staging', 'production'],
    );
    assert.equal(new Set(body.environments.map((e: { key: string }) => e.key)).size, 3);

    const one = await ctx().admin('GET', `/admin/v1/projects/${body.key}`);
    assert.equal(one.statusCode, 200);
    assert.deepEqual(
      one.json().environments.map((e: { key: string }) => e.key),
      body.environments.map((e: { key: string }) => e.key),
    );
    const list = await ctx().admin('GET', '/admin/v1/projects');
    assert.ok(list.json().projects.some((p: { key: string }) => p.key === body.key));
  });

  it('answers 404 for an unknown project and 400 with details for a bad body', async () => {
    const missing = await ctx().admin('GET', '/admin/v1/projects/nope');
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { error: true, message: 'Project with key nope does not exist' });
    for (const body of [{}, { name: '' }, { name: 42 }, { name: '   ' }, { name: 'x', extra: true }, [], 'text', null]) {
      const res = await ctx().admin('POST', '/admin/v1/projects', body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.equal(res.json().error, true);
      assert.equal(res.json().message, 'Invalid request');
    }
    const detailed = await ctx().admin('POST', '/admin/v1/projects', { name: 42 });
    assert.deepEqual(detailed.json().details, [{ field: 'body.name', reason: 'must be string' }]);
  });

  it('creates a flag in every environment at once and refuses a duplicate slug with 409', async () => {
    const project = await createProject(ctx());
    const created = await createFlag(ctx(), project.key, { slug: 'dark-mode', enabled: true, description: 'Dark', payload: { a: 1 } });
    assert.equal(created.slug, 'dark-mode');
    assert.equal(created.environments.length, 3);
    for (const env of created.environments) {
      assert.equal(env.enabled, true);
      assert.deepEqual(env.payload, { a: 1 });
      assert.equal(env.description, 'Dark');
    }
    for (let i = 0; i < 3; i++) {
      const res = await ctx().app.inject({ method: 'GET', url: '/v1/flags/dark-mode', headers: keys(project, i) });
      assert.equal(res.json().enabled, true);
    }
    const dup = await ctx().admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'dark-mode' });
    assert.equal(dup.statusCode, 409);
    assert.deepEqual(dup.json(), { error: true, message: `Flag with slug dark-mode already exists in project ${project.key}` });
  });

  it('refuses bad flag bodies with 400 and details, changing nothing', async () => {
    const project = await createProject(ctx());
    const bad = [
      { slug: '' },
      { slug: 'has space' },
      { slug: '../x' },
      { slug: 'x'.repeat(151) },
      { slug: 'ok', enabled: 'yes' },
      { slug: 'ok', payload: [1, 2] },
      { slug: 'ok', payload: 'text' },
      { slug: 'ok', expiredAt: 'tomorrow' },
      { slug: 'ok', previewContent: { type: 'doc', content: [{ type: 'image', attrs: { src: 'x' } }] } },
      {
        slug: 'ok',
        previewContent: {
          type: 'doc',
          content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x', marks: [{ type: 'link', attrs: { href: 'javascript:alert(1)' } }] }] }],
        },
      },
      { slug: 'ok', previewContent: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x', marks: [{ type: 'blink' }] }] }] } },
      { slug: 'ok', unknownField: 1 },
      { slug: 'preview' },
      { slug: 'code-refs' },
    ];
    for (const body of bad) {
      const res = await ctx().admin('POST', `/admin/v1/projects/${project.key}/flags`, body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      assert.ok(Array.isArray(res.json().details), JSON.stringify(body));
    }
    const flags = await ctx().admin('GET', `/admin/v1/projects/${project.key}/flags`);
    assert.deepEqual(flags.json().flags, []);
    const max = await ctx().admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'x'.repeat(150) });
    assert.equal(max.statusCode, 201);
  });

  it('accepts http, https and mailto links in preview content', async () => {
    const project = await createProject(ctx());
    const doc = (href: string) => ({
      type: 'doc',
      content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x', marks: [{ type: 'link', attrs: { href } }] }] }],
    });
    let n = 0;
    for (const href of ['http://a.example', 'https://a.example/?q=1', 'mailto:team@a.example']) {
      const res = await ctx().admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: `l${n++}`, isPreview: true, previewContent: doc(href) });
      assert.equal(res.statusCode, 201, href);
    }
    const preview = await ctx().app.inject({ method: 'GET', url: '/v1/flags/preview', headers: keys(project) });
    assert.match(preview.json().flags[0].previewContent, /href="mailto:team@a.example"/);
  });

  it('updates a flag in one environment only; absent keeps, null clears', async () => {
    const project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'f', enabled: false, description: 'D', payload: { v: 1 }, expiredAt: '2031-05-05T10:00:00+02:00' });
    const env = project.environments[1]!;
    const res = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env.key}/flags/f`, { enabled: true, payload: null });
    assert.equal(res.statusCode, 200);
    const flag = res.json();
    assert.equal(flag.enabled, true);
    assert.equal(flag.payload, null);
    assert.equal(flag.description, 'D');
    assert.equal(flag.expiredAt, '2031-05-05T08:00:00.000Z');
    assert.equal(flag.environment.key, env.key);
    const other = await ctx().app.inject({ method: 'GET', url: '/v1/flags/f', headers: keys(project, 0) });
    assert.deepEqual(other.json(), { slug: 'f', enabled: false, payload: { v: 1 }, expiredAt: '2031-05-05T08:00:00.000Z', description: 'D' });
    const cleared = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env.key}/flags/f`, { expiredAt: null, description: null });
    assert.equal(cleared.json().expiredAt, null);
    assert.equal(cleared.json().description, '');
  });

  it('answers 404 for PATCH on an unknown project, environment or flag', async () => {
    const project = await createProject(ctx());
    const env = project.environments[0]!.key;
    const cases = [
      [`/admin/v1/projects/nope/environments/${env}/flags/f`, 'Project with key nope does not exist'],
      [`/admin/v1/projects/${project.key}/environments/nope/flags/f`, `Environment with key nope does not exist in project ${project.key}`],
      [`/admin/v1/projects/${project.key}/environments/${env}/flags/nope`, `Flag with slug nope does not exist in project ${project.key}`],
    ] as const;
    for (const [url, text] of cases) {
      const res = await ctx().admin('PATCH', url, { enabled: true });
      assert.equal(res.statusCode, 404, url);
      assert.deepEqual(res.json(), { error: true, message: text });
    }
  });

  it('deletes a flag from every environment, and 404 when it does not exist', async () => {
    const project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'gone', enabled: true });
    const del = await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/flags/gone`);
    assert.equal(del.statusCode, 204);
    for (let i = 0; i < 3; i++) {
      const res = await ctx().app.inject({ method: 'GET', url: '/v1/flags/gone', headers: keys(project, i) });
      assert.equal(res.statusCode, 404);
    }
    const again = await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/flags/gone`);
    assert.equal(again.statusCode, 404);
    const recreated = await ctx().admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'gone' });
    assert.equal(recreated.statusCode, 201);
  });

  it('gives a new environment every flag of the project, disabled', async () => {
    const project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'a', enabled: true, description: 'A', isPreview: true, previewName: 'A!' });
    await createFlag(ctx(), project.key, { slug: 'b', enabled: true });
    const res = await ctx().admin('POST', `/admin/v1/projects/${project.key}/environments`, { name: 'qa' });
    assert.equal(res.statusCode, 201);
    const env = res.json();
    assert.equal(env.name, 'qa');
    const headers = { 'x-project-key': project.key, 'x-environment-key': env.key };
    const list = await ctx().app.inject({ method: 'GET', url: '/v1/flags', headers });
    assert.deepEqual(
      list.json().flags.map((f: { slug: string; enabled: boolean; description: string }) => [f.slug, f.enabled, f.description]),
      [
        ['b', false, ''],
        ['a', false, 'A'],
      ],
    );
    const preview = await ctx().app.inject({ method: 'GET', url: '/v1/flags/preview', headers });
    assert.equal(preview.json().flags[0].previewName, 'A!');
    const dup = await ctx().admin('POST', `/admin/v1/projects/${project.key}/environments`, { name: 'qa' });
    assert.equal(dup.statusCode, 409);
    const later = await createFlag(ctx(), project.key, { slug: 'c', enabled: true });
    assert.equal(later.environments.length, 4);
  });

  it('serves a new environment that a client asked for before it existed', async () => {
    const project = await createProject(ctx());
    // A client with a key that does not exist yet is remembered as unknown...
    const before = await ctx().app.inject({ method: 'GET', url: '/v1/flags', headers: { 'x-project-key': project.key, 'x-environment-key': 'none' } });
    assert.equal(before.statusCode, 404);
    const env = (await ctx().admin('POST', `/admin/v1/projects/${project.key}/environments`, { name: 'later' })).json();
    const after = await ctx().app.inject({ method: 'GET', url: '/v1/flags', headers: { 'x-project-key': project.key, 'x-environment-key': env.key } });
    assert.equal(after.statusCode, 200);
  });

  it('shows an API key once, lists it without the token, and revokes it', async () => {
    const project = await createProject(ctx());
    const res = await ctx().admin('POST', `/admin/v1/projects/${project.key}/api-keys`, { name: 'ci' });
    assert.equal(res.statusCode, 201);
    const key = res.json();
    assert.equal(key.name, 'ci');
    assert.match(key.token, /^fpk_/);
    const list = await ctx().admin('GET', `/admin/v1/projects/${project.key}/api-keys`);
    assert.equal(list.json().apiKeys.length, 1);
    assert.ok(!JSON.stringify(list.json()).includes(key.token));
    const stored = await ctx().handle.db.selectFrom('api_keys').select('token_hash').execute();
    assert.ok(stored.every((row) => row.token_hash !== key.token && row.token_hash.length === 64));
    const del = await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/api-keys/${key.id}`);
    assert.equal(del.statusCode, 204);
    assert.notEqual((await ctx().admin('GET', `/admin/v1/projects/${project.key}/api-keys`)).json().apiKeys[0].revokedAt, null);
    const unknown = await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/api-keys/nope`);
    assert.equal(unknown.statusCode, 404);
  });

  it('lists a flag grouped with its environments', async () => {
    const project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'one' });
    await createFlag(ctx(), project.key, { slug: 'two' });
    const res = await ctx().admin('GET', `/admin/v1/projects/${project.key}/flags`);
    assert.deepEqual(
      res.json().flags.map((f: { slug: string }) => f.slug),
      ['two', 'one'],
    );
    assert.deepEqual(
      res.json().flags[0].environments.map((e: { name: string }) => e.name),
      ['development', 'staging', 'production'],
    );
  });

  it('asks for the token before answering an unknown admin path', async () => {
    const anonymous = await ctx().app.inject({ method: 'GET', url: '/admin/v1/secret-route' });
    assert.equal(anonymous.statusCode, 401);
    const authorized = await ctx().admin('GET', '/admin/v1/secret-route');
    assert.equal(authorized.statusCode, 404);
    assert.deepEqual(authorized.json(), { error: true, message: 'Route GET /admin/v1/secret-route not found' });
  });

  it('names the offending field in validation details', async () => {
    const project = await createProject(ctx());
    const extra = await ctx().admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'ok', enabld: true });
    assert.deepEqual(extra.json().details, [{ field: 'body.enabld', reason: 'must NOT have additional properties' }]);
    const reserved = await ctx().admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'preview' });
    assert.equal(reserved.json().details[0].field, 'body.slug');
  });

  it('answers 404 when listing the feedback of an unknown flag', async () => {
    const project = await createProject(ctx());
    const res = await ctx().admin('GET', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/nope/feedback`);
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { error: true, message: `Flag with slug nope does not exist in project ${project.key}` });
  });
});

forEachDialect(
  'admin lockout after wrong tokens (issue 8)',
  (ctx) => {
    const guess = (token: string, remoteAddress = '198.51.100.20') =>
      ctx().app.inject({ method: 'GET', url: '/admin/v1/projects', remoteAddress, headers: { authorization: `Bearer ${token}` } });

    it('refuses wrong tokens of an address past the configured number, and still accepts the right one', async () => {
      for (let i = 0; i < 3; i++) assert.equal((await guess(`wrong-${i}`)).statusCode, 401);
      const locked = await guess('wrong-3');
      assert.equal(locked.statusCode, 429);
      assert.deepEqual(locked.json(), { error: true, message: 'Too many requests, please try again later.' });
      assert.ok(Number(locked.headers['retry-after']) > 0);
      assert.equal((await guess('wrong-4', '198.51.100.21')).statusCode, 401, 'other addresses are not affected');
      // Someone else's guesses from the same address never lock out a valid credential (issue 20);
      // the admin token clears the address's count.
      assert.equal((await guess(ADMIN_TOKEN)).statusCode, 200);
      assert.equal((await guess('wrong-5')).statusCode, 401);
    });

    it('counts unknown admin paths probed with a wrong token, and nothing without a credential', async () => {
      const probe = (headers: Record<string, string> = {}) =>
        ctx().app.inject({ method: 'GET', url: '/admin/v1/secret-route', remoteAddress: '198.51.100.30', headers });
      for (let i = 0; i < 25; i++) assert.equal((await probe()).statusCode, 401, 'anonymous requests never lock an address out');
      for (let i = 0; i < 3; i++) assert.equal((await probe({ authorization: 'Bearer wrong' })).statusCode, 401);
      assert.equal((await probe({ authorization: 'Bearer wrong' })).statusCode, 429);
      assert.equal((await probe()).statusCode, 401);
    });
  },
  { FLAGPOST_ADMIN_MAX_FAILURES: '3' },
);
