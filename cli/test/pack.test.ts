import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { forEachDialect } from '../../test/support/context.ts';
import { createApiKey, createFlag, createProject, type ProjectFixture } from '../../test/support/fixtures.ts';
import { CLI_DIR, cleanEnv, commitAll, initRepo, tmpDir, write } from './support.ts';

// The published artefact: `npm pack` the workspace, install the tarball alone in a scratch folder (its
// own two dependencies, nothing of the server), and run its `flagpost` binary against a live server.
// Offline, with an empty npm cache of its own: the two dependencies are packed from this checkout's
// install at the versions the scanner pins, so the test never leaves loopback and does not depend on
// what npm's cache holds (`npm ci` fills it with tarballs, not with the metadata an install by name needs).

const run = promisify(execFile);

/** npm without the variables of an enclosing `npm test` (npm_config_local_prefix would point at this repository). */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && key !== 'INIT_CWD'));
}

/** The folder of an installed package as the scanner resolves it (its package.json is not always exported). */
function packageDir(name: string): string {
  let dir = path.dirname(createRequire(path.join(CLI_DIR, 'package.json')).resolve(name));
  while (
    !fs.existsSync(path.join(dir, 'package.json')) ||
    (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string }).name !== name
  ) {
    const parent = path.dirname(dir);
    assert.notEqual(parent, dir, `no package.json of ${name}`);
    dir = parent;
  }
  return dir;
}

let bin: string;
let scratch: string;

before(async () => {
  const out = tmpDir('flagpost-pack-');
  const packed = await run('npm', ['pack', '--json', '--pack-destination', out], { cwd: CLI_DIR, env: npmEnv(), maxBuffer: 16 * 1024 * 1024 });
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const tarball = path.join(out, info!.filename);
  assert.ok(fs.existsSync(tarball), tarball);
  const paths = info!.files.map((f) => f.path).sort();
  assert.ok(paths.includes('dist/bin.js') && paths.includes('README.md') && paths.includes('action.yml') && paths.includes('package.json'), paths.join());
  assert.deepEqual(
    paths.filter((p) => !p.startsWith('dist/')),
    ['README.md', 'action.yml', 'package.json'],
  );
  assert.ok(
    paths.every((p) => !p.startsWith('dist/') || p.endsWith('.js')),
    paths.join(),
  );

  const pinned = (JSON.parse(fs.readFileSync(path.join(CLI_DIR, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies;
  const dependencies: string[] = [];
  for (const [name, version] of Object.entries(pinned)) {
    const dir = packageDir(name);
    assert.equal((JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version, version, name);
    const dep = await run('npm', ['pack', '--json', '--pack-destination', out, dir], { env: npmEnv() });
    dependencies.push(path.join(out, (JSON.parse(dep.stdout) as Array<{ filename: string }>)[0]!.filename));
  }

  scratch = tmpDir('flagpost-install-');
  fs.writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true }));
  const cache = tmpDir('flagpost-npm-cache-');
  await run('npm', ['install', '--offline', '--cache', cache, '--no-audit', '--no-fund', '--loglevel=error', tarball, ...dependencies], {
    cwd: scratch,
    env: npmEnv(),
  });
  bin = path.join(scratch, 'node_modules/.bin/flagpost');
});

describe('the packed @flagpost/cli', () => {
  it('installs with its own two dependencies only', () => {
    const installed = fs.readdirSync(path.join(scratch, 'node_modules')).filter((name) => !name.startsWith('.'));
    assert.deepEqual(installed.sort(), ['@flagpost', 'commander', 'ignore']);
    assert.ok(fs.existsSync(bin));
  });

  it('answers --version and --help', async () => {
    const version = await run(bin, ['--version'], { env: cleanEnv() });
    assert.equal(version.stdout.trim(), JSON.parse(fs.readFileSync(path.join(CLI_DIR, 'package.json'), 'utf8')).version);
    const help = await run(bin, ['code-refs', '--help'], { env: cleanEnv() });
    assert.match(help.stdout, /--dry-run/);
    assert.match(help.stdout, /--max-upload-bytes <n>/);
  });

  it('exits 2 with a clear message when settings are missing', async () => {
    await assert.rejects(run(bin, ['code-refs'], { cwd: tmpDir(), env: cleanEnv() }), (error: { code: number; stderr: string }) => {
      assert.equal(error.code, 2);
      assert.match(error.stderr, /Missing required settings/);
      return true;
    });
  });
});

forEachDialect('the packed @flagpost/cli against a live Flagpost', (ctx) => {
  let project: ProjectFixture;
  let apiUrl: string;

  before(async () => {
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    apiUrl = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}/v1`;
    project = await createProject(ctx(), 'Packed');
    await createFlag(ctx(), project.key, { slug: 'dark-mode' });
    await createFlag(ctx(), project.key, { slug: 'checkout.v2' });
  });

  it('prints the body of a dry run and uploads for real with an API key', async () => {
    const repo = tmpDir('flagpost-packed-repo-');
    write(repo, 'src/a.tsx', 'const on = useFlag("dark-mode");\n<Feature slug="checkout.v2" />\n');
    write(repo, 'src/b.py', "if client.enabled('dark-mode'):\n    pass\n");
    initRepo(repo, 'git@git.example.com:acme/packed.git');
    commitAll(repo);
    const env = cleanEnv({ FLAGPOST_API_URL: apiUrl, FLAGPOST_PROJECT_KEY: project.key, FLAGPOST_ENVIRONMENT_KEY: project.environments[0]!.key });

    const dry = await run(bin, ['code-refs', '--dry-run'], { cwd: repo, env });
    assert.deepEqual(JSON.parse(dry.stdout), {
      branch: 'main',
      projectName: 'packed',
      repositoryUrl: 'https://git.example.com/acme/packed',
      references: {
        'checkout.v2': [{ filePath: 'src/a.tsx', lineNumber: 2, lineContent: '<Feature slug="checkout.v2" />' }],
        'dark-mode': [
          { filePath: 'src/a.tsx', lineNumber: 1, lineContent: 'const on = useFlag("dark-mode");' },
          { filePath: 'src/b.py', lineNumber: 1, lineContent: "if client.enabled('dark-mode'):" },
        ],
      },
    });
    assert.match(dry.stderr, /Scanned 2 files .*2 of 2 flags referenced, 3 references/);
    assert.match(dry.stderr, /Dry run: nothing was sent/);
    const none = await ctx().admin('GET', `/admin/v1/projects/${project.key}/code-refs`);
    assert.deepEqual(none.json().references, []);

    const apiKey = await createApiKey(ctx(), project.key);
    const real = await run(bin, ['code-refs', '--api-key', apiKey], { cwd: repo, env });
    assert.match(real.stderr, /Uploaded 3 references of 2 flags/);
    const stored = (await ctx().admin('GET', `/admin/v1/projects/${project.key}/code-refs`)).json().references as Array<{ slug: string; filePath: string }>;
    assert.deepEqual(stored.map((r) => `${r.slug} ${r.filePath}`).sort(), ['checkout.v2 src/a.tsx', 'dark-mode src/a.tsx', 'dark-mode src/b.py']);
  });
});
