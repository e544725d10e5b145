import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from '../support/process.ts';

// Issue 29 item 16: two `npm start` in one checkout at once each run the build; they must not race on
// dist/ (one exited with ENOENT dist/web/assets/main-*.css). Two builds started at once into one folder
// both succeed and leave one whole build; two starts of unchanged sources build nothing.

const run = promisify(execFile);
const build = (outDir: string, ...flags: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'scripts/build.ts', '--outdir', outDir, ...flags], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });

/** Every file the dashboard's index.html names, and the server's entry points, exist in `dist`. */
function assertWhole(dist: string): void {
  for (const file of ['main.js', 'cli.js', 'flagd-sync.proto', 'web/index.html', '.source-hash']) assert.ok(fs.existsSync(path.join(dist, file)), file);
  const html = fs.readFileSync(path.join(dist, 'web/index.html'), 'utf8');
  const named = [...html.matchAll(/\/assets\/([\w.-]+)/g)].map((m) => m[1]!);
  assert.ok(named.length >= 2, 'index.html names its script and style');
  for (const asset of named) assert.ok(fs.existsSync(path.join(dist, 'web/assets', asset)), `web/assets/${asset}`);
  const entry = fs.readFileSync(path.join(dist, 'main.js'), 'utf8');
  for (const chunk of entry.matchAll(/from ?"\.\/([\w.-]+\.js)"/g)) assert.ok(fs.existsSync(path.join(dist, chunk[1]!)), chunk[1]!);
}

it('runs two builds started at once into one folder: both succeed, one whole build is left, nothing half-made', { timeout: 600_000 }, async () => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-build-race-'));
  try {
    const dist = path.join(parent, 'dist');
    await Promise.all([build(dist, '--force'), build(dist, '--force')]);
    assertWhole(dist);
    assert.deepEqual(fs.readdirSync(parent), ['dist'], 'no temporary folder is left beside it');

    // Unchanged sources: two more starts at once leave the build as it was (same files, untouched).
    const stamp = fs.statSync(path.join(dist, '.source-hash'));
    await Promise.all([build(dist), build(dist)]);
    assert.equal(fs.statSync(path.join(dist, '.source-hash')).mtimeMs, stamp.mtimeMs, 'nothing was rebuilt');
    assertWhole(dist);
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
});
