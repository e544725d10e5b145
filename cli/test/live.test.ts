import assert from 'node:assert/strict';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { before, it } from 'node:test';
import { forEachDialect } from '../../test/support/context.ts';
import { createApiKey, createFlag, createProject, type ProjectFixture } from '../../test/support/fixtures.ts';
import {
  cleanEnv,
  commitAll,
  FIXTURE_EXPECTED,
  FIXTURE_FLAGS,
  FIXTURE_REPOSITORY_URL,
  FIXTURE_UNKNOWN,
  LONG_LINE,
  makeFixtureRepo,
  runCli,
  tmpDir,
  write,
} from './support.ts';

// The scanner against a live Flagpost on a real socket (loopback only), on both engines: what the server
// stores after a scan is exactly what the fixture repository holds.

interface Stored {
  slug: string;
  projectName: string;
  branch: string;
  repositoryUrl: string | null;
  filePath: string;
  lineNumber: number;
  lineContent: string;
}

/** A loopback port that nothing listens on (a moment ago something did). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const triples = (refs: Stored[]) =>
  refs.map((r): [string, string, number] => [r.slug, r.filePath, r.lineNumber]).sort((a, b) => (a.join('\0') < b.join('\0') ? -1 : 1));

forEachDialect('flagpost code-refs against a live Flagpost', (ctx) => {
  let project: ProjectFixture;
  let apiKey: string;
  let apiUrl: string;
  let repo: string;

  const stored = async (query: string): Promise<Stored[]> => {
    const res = await ctx().admin('GET', `/admin/v1/projects/${project.key}/code-refs?${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().references;
  };
  const args = (...extra: string[]) => [
    'code-refs',
    '--api-url',
    apiUrl,
    '--project-key',
    project.key,
    '--environment-key',
    project.environments[0]!.key,
    '--api-key',
    apiKey,
    ...extra,
  ];

  before(async () => {
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    apiUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}/v1`;
    project = await createProject(ctx(), 'Shop');
    apiKey = await createApiKey(ctx(), project.key);
    for (const flag of FIXTURE_FLAGS) await createFlag(ctx(), project.key, flag);
    repo = makeFixtureRepo();
  });

  it('uploads exactly the references of the fixture repository, with branch, project and repository from git', async () => {
    const run = await runCli(args(), { cwd: repo });
    assert.equal(run.code, 0, run.stderr);
    const refs = await stored('branch=main&projectName=web-shop');
    assert.deepEqual(triples(refs), FIXTURE_EXPECTED);
    assert.ok(refs.every((r) => r.repositoryUrl === FIXTURE_REPOSITORY_URL && r.branch === 'main' && r.projectName === 'web-shop'));
    const line = (slug: string, file: string, n: number) => refs.find((r) => r.slug === slug && r.filePath === file && r.lineNumber === n)!.lineContent;
    assert.equal(line('dark-mode', 'src/app.ts', 4), '  const dark = useFlag("dark-mode");');
    assert.equal(line('beta_banner', 'src/app.ts', 9), '  const banner = "beta_banner";', 'trailing whitespace is trimmed');
    assert.equal(line('new-checkout', 'app/main.py', 4), '    print("NEW_CHECKOUT")', 'no carriage return of CRLF files');
    const long = line('new-checkout', 'src/long.ts', 1);
    assert.equal(long.length, 500);
    assert.ok(long.includes('"new-checkout"') && long.startsWith('…') && long.endsWith('…'), long.slice(0, 40));
    assert.ok(LONG_LINE.includes(long.slice(1, -1)));

    assert.match(
      run.stderr,
      /Scanned 12 files \(skipped 4: 1 binary, 2 minified, 1 too large; 6 paths ignored\); 5 of 6 flags referenced, 16 references; 3 unknown slugs/,
    );
    for (const slug of FIXTURE_UNKNOWN) assert.match(run.stderr, new RegExp(`Unknown slug "${slug}"`));
    assert.match(run.stderr, /Unknown slug "ghost-flag" .*src\/Header\.tsx:3/);
    assert.match(run.stderr, /Flag "old-flag" expired at 2020-01-01T00:00:00.000Z and is still referenced: app\/main\.py:7/);
    assert.match(run.stderr, /Uploaded 16 references of 5 flags/);
    assert.equal(run.stdout, '');
    for (const slug of FIXTURE_UNKNOWN) assert.deepEqual(await stored(`slug=${slug}`), [], 'unknown slugs are never uploaded');
  });

  it('uploads first, then exits 1 for --fail-on expired,unknown', async () => {
    const run = await runCli(args('--fail-on', 'expired,unknown', '--branch', 'fail-on'), { cwd: repo });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /--fail-on expired: 1 expired flag is still referenced \(old-flag\)/);
    assert.match(run.stderr, /--fail-on unknown: 3 unknown slugs are used \(ghost-flag, mystery_flag, phantom\)/);
    assert.deepEqual(triples(await stored('branch=fail-on')), FIXTURE_EXPECTED);

    const onlyExpired = await runCli(args('--fail-on', 'unknown', '--branch', 'fail-on'), {
      cwd: repo,
      env: cleanEnv({ FLAGPOST_SCAN_FAIL_ON: 'expired' }),
    });
    assert.equal(onlyExpired.code, 1, 'the flag wins over the environment');
    assert.doesNotMatch(onlyExpired.stderr, /--fail-on expired/);
  });

  it('takes settings from .flagsrc and the environment, and the scan directory from --dir', async () => {
    const cwd = tmpDir();
    write(cwd, '.flagsrc', JSON.stringify({ projectKey: project.key, environmentKey: 'wrong', apiUrl: 'http://127.0.0.1:1/v1', apiKey }));
    const run = await runCli(['code-refs', '--dir', repo, '--branch', 'from-files'], {
      cwd,
      env: cleanEnv({ FLAGPOST_API_URL: apiUrl, FLAGPOST_ENVIRONMENT_KEY: project.environments[0]!.key }),
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /\.flagsrc: "apiUrl" is not taken from a file in the repository .*; ignored/);
    // No .flagpostrc.json in cwd: no aliases, so only the references between quotes of the slugs themselves.
    const refs = await stored('branch=from-files');
    assert.ok(refs.length > 0 && refs.length < FIXTURE_EXPECTED.length, String(refs.length));
    assert.ok(
      refs.every((r) => r.projectName === 'web-shop'),
      'project name from the remote',
    );
    assert.equal(
      refs.find((r) => r.filePath === 'lib/checkout.rb' && r.lineNumber === 3),
      undefined,
      'no pattern without the configuration',
    );
  });

  it('replaces the complete set of the branch: references no longer found are removed', async () => {
    const dir = makeFixtureRepo();
    const first = await runCli(args('--branch', 'scope'), { cwd: dir });
    assert.equal(first.code, 0, first.stderr);
    assert.equal((await stored('branch=scope&slug=beta_banner')).length, 3);
    // Every reference of beta_banner disappears, and one of dark-mode.
    write(dir, 'cmd/server/main.go', fs.readFileSync(path.join(dir, 'cmd/server/main.go'), 'utf8').replace('`beta_banner`', 'true'));
    fs.rmSync(path.join(dir, 'keep.log'));
    write(dir, 'src/app.ts', fs.readFileSync(path.join(dir, 'src/app.ts'), 'utf8').replace('"beta_banner"', '"x"').replace(': "dark-mode"', ': null'));
    commitAll(dir, 'remove references');
    const second = await runCli(args('--branch', 'scope'), { cwd: dir });
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(await stored('branch=scope&slug=beta_banner'), [], 'references of a slug no longer in the code are removed');
    const expected = FIXTURE_EXPECTED.filter(([slug, file, n]) => slug !== 'beta_banner' && !(slug === 'dark-mode' && file === 'src/app.ts' && n === 7));
    assert.deepEqual(triples(await stored('branch=scope')), expected);
    // Other branches keep theirs.
    assert.deepEqual(triples(await stored('branch=main&projectName=web-shop')), FIXTURE_EXPECTED);
  });

  it('prints the body with --dry-run and sends nothing', async () => {
    const run = await runCli(['code-refs', '--dry-run', '--branch', 'dry', ...args().slice(1, 7)], { cwd: repo });
    assert.equal(run.code, 0, run.stderr);
    const body = JSON.parse(run.stdout);
    assert.deepEqual(Object.keys(body), ['branch', 'projectName', 'repositoryUrl', 'references']);
    assert.equal(body.branch, 'dry');
    assert.equal(body.repositoryUrl, FIXTURE_REPOSITORY_URL);
    const fromBody = Object.entries(body.references as Record<string, Array<{ filePath: string; lineNumber: number }>>).flatMap(([slug, list]) =>
      list.map((r): [string, string, number] => [slug, r.filePath, r.lineNumber]),
    );
    assert.deepEqual(fromBody, FIXTURE_EXPECTED);
    assert.match(run.stderr, /Dry run: nothing was sent/);
    assert.deepEqual(await stored('branch=dry'), []);
  });

  it('stops with exit 4 and uploads nothing when a cap or the upload size is exceeded', async () => {
    const files = await runCli(args('--branch', 'capped', '--max-files', '5'), { cwd: repo });
    assert.equal(files.code, 4);
    assert.match(files.stderr, /more than 5 files to scan \(the --max-files cap\)\. Nothing was uploaded\. Raise the cap with --max-files/);
    const refs = await runCli(args('--branch', 'capped', '--max-references', '3'), { cwd: repo });
    assert.equal(refs.code, 4);
    assert.match(refs.stderr, /more than 3 references found \(the --max-references cap\).*--max-references/);
    const size = await runCli(args('--branch', 'capped', '--max-upload-bytes', '1500'), { cwd: repo });
    assert.equal(size.code, 4);
    assert.match(
      size.stderr,
      /The upload would be \d+ bytes, over the --max-upload-bytes limit of 1500\. Nothing was uploaded: .*all or nothing.*--max-line-length/,
    );
    assert.deepEqual(await stored('branch=capped'), []);
  });

  it('exits 3 with the server message for a wrong API key, an unknown environment or no server', async () => {
    const wrongKey = await runCli(['code-refs', ...args().slice(1, 7), '--api-key', 'fpk_wrong'], { cwd: repo });
    assert.equal(wrongKey.code, 3);
    assert.match(wrongKey.stderr, /Flagpost answered 401 to POST .*\/v1\/flags\/code-refs: Invalid API Key/);

    const noEnv = await runCli(args('--environment-key', 'nope'), { cwd: repo });
    assert.equal(noEnv.code, 3);
    assert.match(noEnv.stderr, /Flagpost answered 404 to GET .*\/v1\/flags: Environment with key nope does not exist/);

    const port = await closedPort();
    const closed = await runCli(args('--api-url', `http://127.0.0.1:${port}/v1`), { cwd: repo });
    assert.equal(closed.code, 3);
    assert.match(closed.stderr, new RegExp(`Could not reach Flagpost: GET http://127\\.0\\.0\\.1:${port}/v1/flags failed \\(ECONNREFUSED\\)`));
  });

  it('uploads an empty set when no flag is referenced, which clears the branch', async () => {
    const dir = tmpDir();
    write(dir, 'a.ts', 'export const a = "dark-mode";\n');
    const first = await runCli(args('--branch', 'empty', '--project-name', 'tiny'), { cwd: dir });
    assert.equal(first.code, 0, first.stderr);
    assert.equal((await stored('branch=empty&projectName=tiny')).length, 1);
    write(dir, 'a.ts', 'export const a = 1;\n');
    const second = await runCli(args('--branch', 'empty', '--project-name', 'tiny'), { cwd: dir });
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(await stored('branch=empty&projectName=tiny'), []);
  });
});
