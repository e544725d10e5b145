import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { CLI_DIR } from './support.ts';

// The package stands on its own: it imports node: built-ins, its two dependencies and its own files,
// never the server; its dependencies are pinned; the GitHub Action runs this version.

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

  it('has a GitHub Action that runs this very version with every input mapped to a variable', () => {
    const action = fs.readFileSync(path.join(CLI_DIR, 'action.yml'), 'utf8');
    assert.ok(action.includes(`npx --yes @flagpost/cli@${pkg.version} code-refs`), 'the action runs the package version');
    assert.match(action, /using: composite/);
    for (const [input, variable] of [
      ['api-url', 'FLAGPOST_API_URL'],
      ['project-key', 'FLAGPOST_PROJECT_KEY'],
      ['environment-key', 'FLAGPOST_ENVIRONMENT_KEY'],
      ['api-key', 'FLAGPOST_API_KEY'],
      ['fail-on', 'FLAGPOST_FAIL_ON'],
      ['dir', 'FLAGPOST_DIR'],
    ]) {
      assert.match(action, new RegExp(`^  ${input}:`, 'm'), `input ${input}`);
      assert.ok(action.includes(`${variable}: \${{ inputs.${input} }}`), `${input} -> ${variable}`);
    }
  });

  it('documents every exit code in its README', () => {
    const readme = fs.readFileSync(path.join(CLI_DIR, 'README.md'), 'utf8');
    for (const code of [0, 1, 2, 3, 4, 5]) assert.match(readme, new RegExp(`^\\| ${code} +\\|`, 'm'), `exit code ${code}`);
  });
});
