import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { CLI_DIR, cleanEnv, tmpDir } from './support.ts';

// The package stands on its own: it imports node: built-ins, its two dependencies and its own files,
// never the server; its dependencies are pinned; the GitHub Action builds and runs its own checkout.

const pkg = JSON.parse(fs.readFileSync(path.join(CLI_DIR, 'package.json'), 'utf8'));
const SRC = path.join(CLI_DIR, 'src');

describe('@flagpost/cli package', () => {
  it('imports only node: built-ins, commander, ignore and its own src/ files', () => {
    const sources = fs.readdirSync(SRC).filter((f) => f.endsWith('.ts'));
    assert.ok(sources.length >= 8);
    for (const file of sources) {
      const { importedFiles } = ts.preProcessFile(fs.readFileSync(path.join(SRC, file), 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (fileName.startsWith('.')) {
          const target = path.resolve(SRC, fileName);
          assert.equal(path.dirname(target), SRC, `${file} imports ${fileName}, outside cli/src`);
          assert.ok(fs.existsSync(target), `${file} imports a missing ${fileName}`);
        } else {
          assert.ok(fileName.startsWith('node:') || ['commander', 'ignore'].includes(fileName), `${file} imports ${fileName}`);
        }
      }
    }
  });

  it('pins exactly two runtime dependencies and ships dist, README.md and action.yml', () => {
    assert.equal(pkg.name, '@flagpost/cli');
    assert.deepEqual(Object.keys(pkg.dependencies).sort(), ['commander', 'ignore']);
    for (const version of Object.values(pkg.dependencies)) assert.match(String(version), /^\d+\.\d+\.\d+$/);
    assert.deepEqual(pkg.bin, { flagpost: 'dist/bin.js' });
    assert.deepEqual(pkg.files, ['dist', 'README.md', 'action.yml']);
    assert.equal(pkg.type, 'module');
    assert.equal(pkg.engines.node, '>=20.11');
    assert.equal(pkg.optionalDependencies, undefined);
    assert.equal(pkg.peerDependencies, undefined);
  });

  it('has a GitHub Action that builds and runs the scanner from its own checkout, never from the registry', () => {
    const action = fs.readFileSync(path.join(CLI_DIR, 'action.yml'), 'utf8');
    assert.doesNotMatch(action, /npx|@flagpost\/cli@/, 'nothing is fetched by package name: the name is not published (docs/releasing.md)');
    assert.match(action, /using: composite/);
    assert.match(action, /working-directory: \$\{\{ github\.action_path \}\}\/\.\.\n/);
    assert.match(action, /^ {8}npm ci --workspace cli --ignore-scripts /m, 'the lockfile pins every dependency by its integrity hash; no install scripts');
    for (const [input, variable] of [
      ['api-url', 'FLAGPOST_API_URL'],
      ['project-key', 'FLAGPOST_PROJECT_KEY'],
      ['environment-key', 'FLAGPOST_ENVIRONMENT_KEY'],
      ['api-key', 'FLAGPOST_API_KEY'],
      ['fail-on', 'FLAGPOST_SCAN_FAIL_ON'],
      ['dir', 'FLAGPOST_SCAN_DIR'],
    ]) {
      assert.match(action, new RegExp(`^  ${input}:`, 'm'), `input ${input}`);
      assert.ok(action.includes(`${variable}: \${{ inputs.${input} }}`), `${input} -> ${variable}`);
    }
  });

  it('tells nobody to run the unpublished name: no npx @flagpost/cli in a command of the docs or the dashboard', () => {
    const root = path.dirname(CLI_DIR);
    const files = ['README.md', 'cli/README.md', 'dashboard/src/screens/StaleFlags.tsx'];
    for (const file of files) {
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      // A command line or a <code> that starts with it; the warnings that name it in prose may stay.
      assert.doesNotMatch(text, /^\s*(?:- )?(?:run: |script: )?npx (?:--yes )?@flagpost\/cli|<code>npx @flagpost\/cli/m, file);
    }
  });

  it("runs the action's own steps: the build, then the scanner it built, with the inputs' variables", () => {
    const action = fs.readFileSync(path.join(CLI_DIR, 'action.yml'), 'utf8');
    const runs = [...action.matchAll(/^ {6}run: (?:\|\n((?: {8}.*\n)+)|(.*)\n)/gm)].map((m) => (m[1] ?? m[2]!).replace(/^ {8}/gm, ''));
    assert.equal(runs.length, 2);
    // npm ci needs the registry; the shared install stands for it here. The rest runs as the action has it.
    const build = runs[0]!.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm ci '));
    execFileSync('bash', ['-euc', build.join('\n')], { cwd: path.dirname(CLI_DIR), stdio: 'pipe' });
    const scanned = tmpDir();
    const env = cleanEnv({
      GITHUB_ACTION_PATH: CLI_DIR,
      GITHUB_ACTIONS: 'true',
      GITHUB_REF_NAME: 'main',
      GITHUB_REPOSITORY: 'acme/shop',
      FLAGPOST_API_URL: 'http://127.0.0.1:1/v1',
      FLAGPOST_PROJECT_KEY: 'p',
      FLAGPOST_ENVIRONMENT_KEY: 'e',
      FLAGPOST_API_KEY: 'fpa_not-sent-anywhere',
      FLAGPOST_SCAN_FAIL_ON: 'expired',
      FLAGPOST_SCAN_DIR: scanned,
    });
    const result = spawnSync('bash', ['-euc', runs[1]!], { cwd: scanned, env, encoding: 'utf8' });
    assert.equal(result.status, 3, result.stderr);
    assert.match(result.stderr, /Could not reach Flagpost: GET http:\/\/127\.0\.0\.1:1\/v1\/flags failed/);
  });

  it('documents every exit code in its README', () => {
    const readme = fs.readFileSync(path.join(CLI_DIR, 'README.md'), 'utf8');
    for (const code of [0, 1, 2, 3, 4, 5]) assert.match(readme, new RegExp(`^\\| ${code} +\\|`, 'm'), `exit code ${code}`);
  });
});
