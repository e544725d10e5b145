import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture, sampleDoc } from '../support/fixtures.ts';

const CACHE = 'public, s-maxage=60, max-age=30, stale-while-revalidate=60, stale-if-error=300';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

forEachDialect('flag reads', (ctx) => {
  let project: ProjectFixture;
  const get = (url: string, headers: Record<string, string> = keys(project)) => ctx().app.inject({ method: 'GET', url, headers });

  before(async () => {
    project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'first', enabled: true, description: 'Oldest', payload: { color: 'blue' } });
    await createFlag(ctx(), project.key, { slug: 'second', enabled: false, expiredAt: '2030-01-01T00:00:00Z' });
    await createFlag(ctx(), project.key, {
      slug: 'beta-ui',
      enabled: true,
      isPreview: true,
      previewName: 'Beta UI',
      previewContent: sampleDoc,
    });
  });

  it('answers GET /flags/{slug} with the Flag object itself, without timestamps', async () => {
    const res = await get('/v1/flags/first');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { slug: 'first', enabled: true, payload: { color: 'blue' }, expiredAt: null, description: 'Oldest' });
    assert.match(res.headers['content-type'] as string, /^application\/json/);
  });

  it('sends expiredAt as an ISO 8601 date-time', async () => {
    const res = await get('/v1/flags/second');
    assert.equal(res.json().expiredAt, '2030-01-01T00:00:00.000Z');
  });

  it('answers 404 with enabled:false and the exact message for an unknown slug', async () => {
    const res = await get('/v1/flags/nope');
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { enabled: false, error: true, message: 'Flag with slug nope does not exist' });
  });

  it('sends the exact Cache-Control, Vary and a strong ETag on 200s and on the single-flag 404 (D6)', async () => {
    for (const url of ['/v1/flags/first', '/v1/flags', '/v1/flags/preview', '/v1/flags/nope']) {
      const res = await get(url);
      assert.equal(res.headers['cache-control'], CACHE, url);
      assert.equal(res.headers.vary, 'x-project-key, x-environment-key', url);
      assert.match(res.headers.etag as string, /^"[^"]+"$/, url);
    }
  });

  it('answers 304 without a body to a matching If-None-Match, and 200 to a stale one (D6)', async () => {
    for (const url of ['/v1/flags/first', '/v1/flags', '/v1/flags/preview']) {
      const first = await get(url);
      const etag = first.headers.etag as string;
      const again = await get(url, { ...keys(project), 'if-none-match': etag });
      assert.equal(again.statusCode, 304, url);
      assert.equal(again.body, '');
      assert.equal(again.headers.etag, etag);
      const weak = await get(url, { ...keys(project), 'if-none-match': `"other", W/${etag}` });
      assert.equal(weak.statusCode, 304, url);
      const stale = await get(url, { ...keys(project), 'if-none-match': '"stale"' });
      assert.equal(stale.statusCode, 200, url);
    }
  });

  it('ignores If-None-Match on the single-flag 404', async () => {
    const first = await get('/v1/flags/nope');
    const again = await get('/v1/flags/nope', { ...keys(project), 'if-none-match': first.headers.etag as string });
    assert.equal(again.statusCode, 404);
  });

  it('changes the ETag when the flag changes', async () => {
    const before = await get('/v1/flags/second');
    const patch = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/second`, {
      description: 'changed',
    });
    assert.equal(patch.statusCode, 200);
    const after = await get('/v1/flags/second', { ...keys(project), 'if-none-match': before.headers.etag as string });
    assert.equal(after.statusCode, 200);
    assert.equal(after.json().description, 'changed');
    assert.notEqual(after.headers.etag, before.headers.etag);
  });

  it('lists flags with timestamps, newest first (GET /flags)', async () => {
    const res = await get('/v1/flags');
    assert.equal(res.statusCode, 200);
    const { flags } = res.json();
    assert.deepEqual(
      flags.map((f: { slug: string }) => f.slug),
      ['beta-ui', 'second', 'first'],
    );
    for (const flag of flags) {
      assert.deepEqual(Object.keys(flag).sort(), ['createdAt', 'description', 'enabled', 'expiredAt', 'payload', 'slug', 'updatedAt']);
      assert.match(flag.createdAt, ISO);
      assert.match(flag.updatedAt, ISO);
    }
  });

  it('answers 200 with an empty list for an environment without flags', async () => {
    const empty = await createProject(ctx(), 'Empty');
    const res = await get('/v1/flags', keys(empty));
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { flags: [] });
    const preview = await get('/v1/flags/preview', keys(empty));
    assert.deepEqual(preview.json(), { flags: [] });
  });

  it('lists preview flags with their content rendered to escaped HTML (D9)', async () => {
    const res = await get('/v1/flags/preview');
    assert.equal(res.statusCode, 200);
    const { flags } = res.json();
    assert.equal(flags.length, 1);
    const [flag] = flags;
    assert.deepEqual(Object.keys(flag).sort(), ['createdAt', 'enabled', 'expiredAt', 'isPreview', 'previewContent', 'previewName', 'slug']);
    assert.equal(flag.slug, 'beta-ui');
    assert.equal(flag.isPreview, true);
    assert.equal(flag.previewName, 'Beta UI');
    assert.equal(flag.previewContent, '<p><strong>Try the &lt;new&gt; checkout</strong></p>');
  });

  it('keeps preview flags ordinary flags in GET /flags and GET /flags/{slug} (D9)', async () => {
    const one = await get('/v1/flags/beta-ui');
    assert.deepEqual(Object.keys(one.json()).sort(), ['description', 'enabled', 'expiredAt', 'payload', 'slug']);
  });

  it('keeps environments apart', async () => {
    await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[2]!.key}/flags/first`, { enabled: false });
    assert.equal((await get('/v1/flags/first', keys(project, 0))).json().enabled, true);
    assert.equal((await get('/v1/flags/first', keys(project, 2))).json().enabled, false);
  });

  it('answers 400 with the D4 message when a key header is missing or empty', async () => {
    for (const url of ['/v1/flags/first', '/v1/flags', '/v1/flags/preview']) {
      for (const headers of [{}, { 'x-project-key': project.key }, { 'x-environment-key': 'x' }, { 'x-project-key': '', 'x-environment-key': '' }]) {
        const res = await get(url, headers as Record<string, string>);
        assert.equal(res.statusCode, 400, url);
        assert.deepEqual(res.json(), { error: true, message: 'Missing required headers: x-project-key or x-environment-key' });
        assert.equal(res.headers['cache-control'], 'no-store');
      }
    }
  });

  it('answers unknown keys as D5 says', async () => {
    const wrongEnv = { 'x-project-key': project.key, 'x-environment-key': 'nope' };
    const wrongProject = { 'x-project-key': 'nope', 'x-environment-key': project.environments[0]!.key };
    for (const headers of [wrongEnv, wrongProject]) {
      const one = await get('/v1/flags/first', headers);
      assert.equal(one.statusCode, 404);
      assert.deepEqual(one.json(), { enabled: false, error: true, message: 'Flag with slug first does not exist' });
      assert.equal(one.headers['cache-control'], CACHE);
      for (const url of ['/v1/flags', '/v1/flags/preview']) {
        const res = await get(url, headers);
        assert.equal(res.statusCode, 404);
        assert.deepEqual(res.json(), { error: true, message: `Environment with key ${headers['x-environment-key']} does not exist` });
        assert.equal(res.headers['cache-control'], 'no-store');
      }
    }
  });

  it('does not accept an environment key of another project (D5)', async () => {
    const other = await createProject(ctx(), 'Other');
    const res = await get('/v1/flags/first', { 'x-project-key': other.key, 'x-environment-key': project.environments[0]!.key });
    assert.equal(res.statusCode, 404);
  });

  it('answers odd slugs with the flag 404, never a 500', async () => {
    for (const slug of ['a%20b', '..', '%2e%2e', '%252e', 'x'.repeat(1000), '%F0%9F%9A%80', '%00', "'%3B--"]) {
      const res = await get(`/v1/flags/${slug}`);
      assert.ok([400, 404].includes(res.statusCode), `${slug}: ${res.statusCode}`);
      assert.equal(res.json().error, true);
    }
    const spaced = await get('/v1/flags/a%20b');
    assert.equal(spaced.json().message, 'Flag with slug a b does not exist');
  });

  it('allows any origin and answers the CORS preflight (D7)', async () => {
    const pre = await ctx().app.inject({
      method: 'OPTIONS',
      url: '/v1/flags/first',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-project-key,x-environment-key' },
    });
    assert.equal(pre.statusCode, 204);
    assert.equal(pre.headers['access-control-allow-origin'], '*');
    assert.match(pre.headers['access-control-allow-methods'] as string, /GET/);
    assert.match(pre.headers['access-control-allow-methods'] as string, /POST/);
    assert.equal(pre.headers['access-control-allow-headers'], 'Content-Type, x-project-key, x-environment-key, x-api-key');
    assert.equal(pre.headers['access-control-max-age'], '86400');
    for (const url of ['/v1/flags', '/v1/flags/preview/feedback', '/v1/flags/code-refs']) {
      const other = await ctx().app.inject({ method: 'OPTIONS', url, headers: { origin: 'https://x.example', 'access-control-request-method': 'POST' } });
      assert.equal(other.statusCode, 204, url);
      assert.equal(other.headers['access-control-allow-origin'], '*', url);
    }
    const res = await get('/v1/flags/first', { ...keys(project), origin: 'https://app.example' });
    assert.equal(res.headers['access-control-allow-origin'], '*');
  });

  it('sees a flag deleted through the admin API disappear from every read', async () => {
    await createFlag(ctx(), project.key, { slug: 'short-lived', enabled: true });
    assert.equal((await get('/v1/flags/short-lived')).statusCode, 200);
    const del = await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/flags/short-lived`);
    assert.equal(del.statusCode, 204);
    assert.equal((await get('/v1/flags/short-lived')).statusCode, 404);
    assert.ok(!(await get('/v1/flags')).json().flags.some((f: { slug: string }) => f.slug === 'short-lived'));
  });
});
