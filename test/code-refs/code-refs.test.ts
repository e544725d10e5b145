import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createApiKey, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

const GENERIC = 'Something went wrong, please try again later.';
const row = (n = 1) => ({ filePath: `src/file${n}.ts`, lineNumber: n, lineContent: `if (flags.isOn('x')) {} // ${n}` });

forEachDialect('code references', (ctx) => {
  let project: ProjectFixture;
  let token: string;
  const upload = (body: unknown, headers: Record<string, string> = { ...keys(project), 'x-api-key': token }) =>
    ctx().app.inject({
      method: 'POST',
      url: '/v1/flags/code-refs',
      headers: { 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const stored = async (query = '') => (await ctx().admin('GET', `/admin/v1/projects/${project.key}/code-refs${query}`)).json().references;

  before(async () => {
    project = await createProject(ctx());
    token = await createApiKey(ctx(), project.key);
  });

  it('stores references and answers 201 with success and a message', async () => {
    const res = await upload({
      branch: 'main',
      projectName: 'web',
      repositoryUrl: 'https://git.example/web',
      references: { a: [row(1), row(2)], b: [row(3)] },
    });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().success, true);
    assert.equal(typeof res.json().message, 'string');
    const refs = await stored('?branch=main');
    assert.equal(refs.length, 3);
    assert.deepEqual(
      {
        slug: refs[0].slug,
        projectName: refs[0].projectName,
        branch: refs[0].branch,
        repositoryUrl: refs[0].repositoryUrl,
        filePath: refs[0].filePath,
        lineNumber: refs[0].lineNumber,
      },
      { slug: 'a', projectName: 'web', branch: 'main', repositoryUrl: 'https://git.example/web', filePath: 'src/file1.ts', lineNumber: 1 },
    );
  });

  it('replaces the rows of the slugs in the payload only, per branch and projectName (D12)', async () => {
    await upload({ branch: 'dev', projectName: 'web', references: { a: [row(1)], b: [row(2)] } });
    await upload({ branch: 'dev', projectName: 'api', references: { a: [row(7)] } });
    await upload({ branch: 'main', projectName: 'web', references: { a: [row(9)] } });
    const main = await stored('?branch=main&projectName=web');
    assert.deepEqual(
      main.map((r: { slug: string; lineNumber: number }) => [r.slug, r.lineNumber]),
      [
        ['a', 9],
        ['b', 3],
      ],
    );
    const dev = await stored('?branch=dev');
    assert.deepEqual(
      dev.map((r: { projectName: string; slug: string; lineNumber: number }) => [r.projectName, r.slug, r.lineNumber]),
      [
        ['api', 'a', 7],
        ['web', 'a', 1],
        ['web', 'b', 2],
      ],
    );
    assert.deepEqual((await stored('?slug=b&branch=main')).length, 1);
  });

  it('checks in the order key headers, API key, body, environment (D12)', async () => {
    const invalidBody = { branch: '' };
    const noKeys = await upload(invalidBody, { 'x-api-key': 'bad' });
    assert.equal(noKeys.statusCode, 400);
    assert.equal(noKeys.json().message, 'Missing required headers: x-project-key or x-environment-key');

    const missing = await upload('{not json', keys(project));
    assert.equal(missing.statusCode, 401);
    assert.deepEqual(missing.json(), { error: true, message: 'Missing required header: x-api-key' });

    const wrong = await upload(invalidBody, { ...keys(project), 'x-api-key': 'fpk_wrong' });
    assert.equal(wrong.statusCode, 401);
    assert.deepEqual(wrong.json(), { error: true, message: 'Invalid API Key' });

    const badBody = await upload(invalidBody, { 'x-project-key': project.key, 'x-environment-key': 'nope', 'x-api-key': token });
    assert.equal(badBody.statusCode, 400);
    assert.equal(badBody.json().message, GENERIC);

    const noEnv = await upload(
      { branch: 'x', projectName: 'p', references: { a: [row()] } },
      { 'x-project-key': project.key, 'x-environment-key': 'nope', 'x-api-key': token },
    );
    assert.equal(noEnv.statusCode, 404);
    assert.deepEqual(noEnv.json(), { error: true, message: 'Environment with key nope does not exist' });
  });

  it('accepts a key only with its own project, and not once revoked (D11)', async () => {
    const other = await createProject(ctx(), 'Other');
    const otherToken = await createApiKey(ctx(), other.key);
    const body = { branch: 'k', projectName: 'p', references: { a: [row()] } };
    const cross = await upload(body, { ...keys(project), 'x-api-key': otherToken });
    assert.equal(cross.statusCode, 401);
    assert.equal(cross.json().message, 'Invalid API Key');
    const unknownProject = await upload(body, { 'x-project-key': 'nope', 'x-environment-key': 'nope', 'x-api-key': token });
    assert.equal(unknownProject.statusCode, 401);

    const res = await ctx().admin('POST', `/admin/v1/projects/${project.key}/api-keys`, { name: 'temp' });
    const temp = res.json();
    assert.equal((await upload(body, { ...keys(project), 'x-api-key': temp.token })).statusCode, 201);
    await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/api-keys/${temp.id}`);
    const revoked = await upload(body, { ...keys(project), 'x-api-key': temp.token });
    assert.equal(revoked.statusCode, 401);
    assert.equal(revoked.json().message, 'Invalid API Key');
  });

  it('accepts every limit at its boundary', async () => {
    const body = {
      branch: 'b'.repeat(255),
      projectName: 'p'.repeat(150),
      repositoryUrl: 'u'.repeat(255),
      references: { ['s'.repeat(150)]: [{ filePath: 'f'.repeat(2000), lineNumber: 1, lineContent: 'c'.repeat(4000) }] },
    };
    const res = await upload(body);
    assert.equal(res.statusCode, 201, res.body);
    const refs = await stored(`?branch=${'b'.repeat(255)}`);
    assert.equal(refs[0].lineContent.length, 4000);
  });

  it('refuses every limit one past its boundary and leaves stored references exactly as they were', async () => {
    await upload({ branch: 'keep', projectName: 'web', references: { a: [row(1)] } });
    const before = await stored();
    const ok = { branch: 'keep', projectName: 'web', references: { a: [row(2)] } };
    const invalid: unknown[] = [
      { ...ok, branch: '' },
      { ...ok, branch: 'b'.repeat(256) },
      { ...ok, projectName: '' },
      { ...ok, projectName: 'p'.repeat(151) },
      { ...ok, repositoryUrl: 'u'.repeat(256) },
      { ...ok, references: { ['s'.repeat(151)]: [row()] } },
      { ...ok, references: { '': [row()] } },
      { ...ok, references: { a: [] } },
      { ...ok, references: { a: row() } },
      { ...ok, references: { a: [{ ...row(), filePath: '' }] } },
      { ...ok, references: { a: [{ ...row(), filePath: 'f'.repeat(2001) }] } },
      { ...ok, references: { a: [{ ...row(), lineContent: '' }] } },
      { ...ok, references: { a: [{ ...row(), lineContent: 'c'.repeat(4001) }] } },
      { ...ok, references: { a: [{ ...row(), lineNumber: 0 }] } },
      { ...ok, references: { a: [{ ...row(), lineNumber: -1 }] } },
      { ...ok, references: { a: [{ ...row(), lineNumber: 1.5 }] } },
      { ...ok, references: { a: [{ ...row(), lineNumber: '3' }] } },
      { ...ok, references: { a: [row(3)], b: [row(4), { filePath: 'x' }] } },
      { ...ok, references: [] },
      { ...ok, references: undefined },
      { branch: 'keep', references: { a: [row()] } },
      [ok],
      null,
      'text',
    ];
    for (const body of invalid) {
      const res = await upload(JSON.stringify(body));
      assert.equal(res.statusCode, 400, JSON.stringify(body)?.slice(0, 120));
      assert.equal(res.json().message, GENERIC);
    }
    assert.deepEqual(await stored(), before);
  });

  it('stores a large upload in one go', async () => {
    const many = Array.from({ length: 1200 }, (_, i) => row(i + 1));
    const res = await upload({ branch: 'big', projectName: 'web', references: { big: many } });
    assert.equal(res.statusCode, 201);
    assert.equal((await stored('?branch=big')).length, 1200);
  });
});
