import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CliError } from '../src/errors.ts';
import { type Config, DEFAULT_LIMITS, type FlagValues, loadConfig } from '../src/config.ts';
import { tmpDir, write } from './support.ts';

const load = (cwd: string, env: Record<string, string> = {}, flags: FlagValues = {}): Config => loadConfig({ cwd, env, flags });

function fails(fn: () => unknown, pattern: RegExp, exitCode = 2): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof CliError, String(error));
    assert.equal(error.exitCode, exitCode);
    assert.match(error.message, pattern);
    return true;
  });
}

const FULL_FLAGSRC = {
  projectKey: 'p-flagsrc',
  environmentKey: 'e-flagsrc',
  apiKey: 'k-flagsrc',
  other: 'kept for Basestack',
};
const API_URL = { FLAGPOST_API_URL: 'http://127.0.0.1:1/v1/' };

describe('configuration layers: .flagsrc < .flagpostrc.json < environment < flags', () => {
  it('reads everything from .flagsrc alone, with the defaults', () => {
    const cwd = tmpDir();
    write(cwd, '.flagsrc', JSON.stringify(FULL_FLAGSRC));
    const config = load(cwd, API_URL);
    assert.equal(config.apiUrl, 'http://127.0.0.1:1/v1', 'trailing slash dropped');
    assert.equal(config.projectKey, 'p-flagsrc');
    assert.equal(config.environmentKey, 'e-flagsrc');
    assert.equal(config.apiKey, 'k-flagsrc');
    assert.equal(config.dir, cwd);
    assert.equal(config.dryRun, false);
    assert.deepEqual(config.failOn, []);
    assert.deepEqual(config.limits, DEFAULT_LIMITS);
    assert.deepEqual(config.aliases, { casings: [], patterns: [] });
    assert.deepEqual(config.files, [path.join(cwd, '.flagsrc')]);
    assert.deepEqual(config.notices, []);
    assert.equal(config.scanEnvFiles, false);
  });

  it('lets each layer override the one below it, key by key', () => {
    const cwd = tmpDir();
    write(cwd, '.flagsrc', JSON.stringify(FULL_FLAGSRC));
    write(
      cwd,
      '.flagpostrc.json',
      JSON.stringify({ projectKey: 'p-rc', environmentKey: 'e-rc', apiKey: 'k-rc', maxFiles: 10, maxLineLength: 100, projectName: 'rc' }),
    );
    write(cwd, 'sub/.keep', '');
    const env = {
      ...API_URL,
      FLAGPOST_ENVIRONMENT_KEY: 'e-env',
      FLAGPOST_API_KEY: 'k-env',
      FLAGPOST_SCAN_MAX_FILES: '20',
      FLAGPOST_SCAN_DIR: 'sub',
      FLAGPOST_SCAN_FAIL_ON: 'expired',
    };
    const config = load(cwd, env, { apiKey: 'k-flag', maxFiles: '30', failOn: 'unknown,expired' });
    assert.equal(config.apiUrl, 'http://127.0.0.1:1/v1');
    assert.equal(config.projectKey, 'p-rc', '.flagpostrc.json over .flagsrc');
    assert.equal(config.environmentKey, 'e-env', 'environment over .flagpostrc.json');
    assert.equal(config.apiKey, 'k-flag', 'flag over environment');
    assert.equal(config.limits.maxFiles, 30);
    assert.equal(config.limits.maxLineLength, 100);
    assert.equal(config.projectName, 'rc');
    assert.equal(config.dir, path.join(cwd, 'sub'));
    assert.deepEqual(config.failOn, ['unknown', 'expired']);
  });

  it('treats empty environment variables as unset (GitHub Actions passes empty inputs)', () => {
    const cwd = tmpDir();
    write(cwd, '.flagsrc', JSON.stringify(FULL_FLAGSRC));
    const config = load(cwd, { ...API_URL, FLAGPOST_API_KEY: '', FLAGPOST_SCAN_FAIL_ON: '', FLAGPOST_SCAN_DIR: '', FLAGPOST_SCAN_MAX_FILES: ' ' });
    assert.equal(config.apiKey, 'k-flagsrc');
    assert.deepEqual(config.failOn, []);
    assert.equal(config.dir, cwd);
    assert.equal(config.limits.maxFiles, DEFAULT_LIMITS.maxFiles);
  });

  it('reads --config (or FLAGPOST_SCAN_CONFIG) instead of .flagpostrc.json, with dir relative to that file', () => {
    const cwd = tmpDir();
    write(cwd, '.flagpostrc.json', JSON.stringify({ projectKey: 'default-file' }));
    write(cwd, 'conf/scan.json', JSON.stringify({ projectKey: 'named', environmentKey: 'e', apiKey: 'k', dir: '../src' }));
    write(cwd, 'src/a.ts', '');
    const byFlag = load(cwd, API_URL, { config: 'conf/scan.json' });
    assert.equal(byFlag.projectKey, 'named');
    assert.equal(byFlag.dir, path.join(cwd, 'src'));
    assert.deepEqual(byFlag.files, [path.join(cwd, 'conf/scan.json')]);
    assert.equal(load(cwd, { ...API_URL, FLAGPOST_SCAN_CONFIG: 'conf/scan.json' }).projectKey, 'named');
    fails(() => load(cwd, {}, { config: 'missing.json' }), /missing\.json does not exist \(named by --config\)/);
  });

  it('reads aliases, ignore patterns, failOn and limits from .flagpostrc.json', () => {
    const cwd = tmpDir();
    write(
      cwd,
      '.flagpostrc.json',
      JSON.stringify({
        $schema: 'ignored',
        projectKey: 'p',
        environmentKey: 'e',
        aliases: { casings: ['camelCase', 'UPPER_SNAKE', 'camelCase'], patterns: ['flags\\.isEnabled\\((\\w+)\\)'] },
        ignore: ['*.snap', 'vendor/'],
        failOn: ['expired'],
        maxReferences: 5,
        maxFileBytes: 100,
        maxUploadBytes: 2048,
        scanEnvFiles: true,
      }),
    );
    const config = load(cwd, API_URL, { dryRun: true });
    assert.deepEqual(config.aliases, { casings: ['camelCase', 'UPPER_SNAKE'], patterns: ['flags\\.isEnabled\\((\\w+)\\)'] });
    assert.deepEqual(config.ignore, ['*.snap', 'vendor/']);
    assert.deepEqual(config.failOn, ['expired']);
    assert.deepEqual(config.limits, { ...DEFAULT_LIMITS, maxReferences: 5, maxFileBytes: 100, maxUploadBytes: 2048 });
    assert.equal(config.apiKey, undefined, 'no API key needed for a dry run');
    assert.equal(config.dryRun, true);
    assert.equal(config.scanEnvFiles, true);
    assert.equal(load(cwd, { ...API_URL, FLAGPOST_SCAN_DRY_RUN: 'true' }).dryRun, true);
    assert.equal(load(cwd, { ...API_URL, FLAGPOST_SCAN_DRY_RUN: 'true', FLAGPOST_SCAN_ENV_FILES: 'false' }).scanEnvFiles, false);
  });

  it('names every missing required setting and where it can come from (exit 2)', () => {
    const cwd = tmpDir();
    fails(
      () => load(cwd),
      /Missing required settings:\n {2}apiUrl \(--api-url or FLAGPOST_API_URL\)\n {2}projectKey \(--project-key, FLAGPOST_PROJECT_KEY, or "projectKey" in \.flagpostrc\.json or \.flagsrc\)\n {2}environmentKey .*\n {2}apiKey/,
    );
    fails(
      () => load(cwd, { FLAGPOST_API_URL: 'http://x/v1', FLAGPOST_PROJECT_KEY: 'p', FLAGPOST_ENVIRONMENT_KEY: 'e' }),
      /Missing required setting:\n {2}apiKey/,
    );
  });

  it('refuses invalid files and values with a clear message (exit 2)', () => {
    const base = { projectKey: 'p', environmentKey: 'e', apiKey: 'k' };
    const withRc = (rc: unknown, env: Record<string, string> = API_URL) => {
      const cwd = tmpDir();
      write(cwd, '.flagpostrc.json', typeof rc === 'string' ? rc : JSON.stringify(rc));
      return () => load(cwd, env);
    };
    fails(withRc('{ "apiUrl": '), /\.flagpostrc\.json: not valid JSON/);
    fails(withRc([]), /\.flagpostrc\.json: must be a JSON object/);
    fails(withRc({ ...base, apiURL: 'x' }), /unknown key "apiURL"; known keys are apiUrl, /);
    fails(withRc({ ...base, scanEnvFiles: 'yes' }), /"scanEnvFiles" must be true or false/);
    fails(withRc({ ...base, maxFiles: 0 }), /"maxFiles" must be a whole number from 1, not 0/);
    fails(withRc({ ...base, maxLineLength: 4001 }), /"maxLineLength" must be a whole number from 20 to 4000/);
    fails(withRc({ ...base, maxFiles: '12' }), /"maxFiles" must be a whole number/);
    fails(
      withRc({ ...base, aliases: { casings: ['lowercase'] } }),
      /unknown casing "lowercase"; use camelCase, PascalCase, snake_case, UPPER_SNAKE, kebab-case/,
    );
    fails(withRc({ ...base, aliases: { patterns: ['flags\\.on\\(\\w+\\)'] } }), /patterns\[0\] needs a capture group/);
    fails(withRc({ ...base, aliases: { patterns: ['(unclosed'] } }), /patterns\[0\] is not a valid regular expression/);
    fails(withRc({ ...base, aliases: { regexes: [] } }), /unknown key "regexes"/);
    fails(withRc({ ...base, ignore: 'dist/' }), /"ignore" must be an array/);
    fails(withRc({ ...base, failOn: ['stale'] }), /unknown condition "stale"/);
    fails(withRc({ ...base, projectName: '' }), /"projectName" must be a non-empty string/);
    fails(withRc(base, { FLAGPOST_API_URL: 'localhost:3000/v1' }), /apiUrl must use http or https/);
    fails(withRc(base, { FLAGPOST_API_URL: 'not a url' }), /apiUrl must be an absolute http\(s\) URL/);
    fails(withRc({ ...base, dir: 'nowhere' }), /The directory to scan, .*nowhere, does not exist/);

    const cwd = tmpDir();
    write(cwd, '.flagsrc', '{oops');
    fails(() => load(cwd), /\.flagsrc: not valid JSON/);
    const ok = tmpDir();
    write(ok, '.flagsrc', JSON.stringify(base));
    fails(() => load(ok, { ...API_URL, FLAGPOST_SCAN_MAX_FILES: 'many' }), /FLAGPOST_SCAN_MAX_FILES must be a whole number from 1, not "many"/);
    fails(() => load(ok, API_URL, { maxUploadBytes: '-1' }), /--max-upload-bytes must be a whole number/);
    fails(() => load(ok, API_URL, { failOn: 'expired,nope' }), /--fail-on: unknown condition "nope"; use expired, unknown/);
    fails(() => load(ok, { ...API_URL, FLAGPOST_SCAN_DRY_RUN: 'maybe' }), /FLAGPOST_SCAN_DRY_RUN must be true or false/);
  });
});

describe("what a repository's own files may not decide (ADR 0023)", () => {
  const base = { projectKey: 'p', environmentKey: 'e', apiKey: 'k' };

  it('refuses apiUrl in .flagpostrc.json: a pull request must not send the API key elsewhere', () => {
    const cwd = tmpDir();
    write(cwd, '.flagpostrc.json', JSON.stringify({ ...base, apiUrl: 'https://collector.evil.test/v1' }));
    fails(() => load(cwd, API_URL), /\.flagpostrc\.json: "apiUrl" is not taken from a file in the repository .*set it with --api-url or FLAGPOST_API_URL/);
  });

  it("ignores Basestack's apiUrl in .flagsrc, says so, and takes the URL from the environment", () => {
    const cwd = tmpDir();
    write(cwd, '.flagsrc', JSON.stringify({ ...base, apiUrl: 'https://collector.evil.test/v1' }));
    const config = load(cwd, API_URL);
    assert.equal(config.apiUrl, 'http://127.0.0.1:1/v1');
    assert.deepEqual(config.notices, [
      '.flagsrc: "apiUrl" is not taken from a file in the repository (a pull request could send the API key elsewhere); set it with --api-url or FLAGPOST_API_URL; ignored',
    ]);
    fails(() => load(cwd), /Missing required setting:\n {2}apiUrl \(--api-url or FLAGPOST_API_URL\)/);
  });

  it('refuses a dir in a configuration file that leads out of the working directory, also through a symbolic link', () => {
    const outside = tmpDir();
    write(outside, 'secrets.ts', "const flag = 'new-checkout';");
    const cwd = tmpDir();
    write(cwd, 'src/a.ts', '');
    fs.symlinkSync(outside, path.join(cwd, 'linked'));
    for (const dir of [outside, path.relative(cwd, outside), 'linked', 'src/../..']) {
      write(cwd, '.flagpostrc.json', JSON.stringify({ ...base, dir }));
      fails(() => load(cwd, API_URL), /\.flagpostrc\.json: "dir" resolves to .*, outside the working directory .*use --dir or FLAGPOST_SCAN_DIR/);
    }
    write(cwd, '.flagpostrc.json', JSON.stringify({ ...base, dir: 'src' }));
    assert.equal(load(cwd, API_URL).dir, path.join(cwd, 'src'));
    write(cwd, '.flagpostrc.json', JSON.stringify({ ...base, dir: 'linked' }));
    assert.equal(load(cwd, { ...API_URL, FLAGPOST_SCAN_DIR: outside }).dir, outside, 'the environment (the CI definition) may choose any folder');
    assert.equal(load(cwd, API_URL, { dir: outside }).dir, outside);
  });
});

describe("the scanner's own variables, apart from the server's", () => {
  it("does not read the server's FLAGPOST_MAX_FILES and FLAGPOST_MAX_FILE_BYTES", () => {
    const cwd = tmpDir();
    const env = { ...API_URL, FLAGPOST_PROJECT_KEY: 'p', FLAGPOST_ENVIRONMENT_KEY: 'e', FLAGPOST_API_KEY: 'k' };
    const config = load(cwd, { ...env, FLAGPOST_MAX_FILES: '5', FLAGPOST_MAX_FILE_BYTES: '1048576' });
    assert.deepEqual(config.limits, DEFAULT_LIMITS);
    const own = load(cwd, { ...env, FLAGPOST_SCAN_MAX_FILES: '7', FLAGPOST_SCAN_MAX_FILE_BYTES: '99' });
    assert.deepEqual([own.limits.maxFiles, own.limits.maxFileBytes], [7, 99]);
  });

  it('names the new variable when a former scanner variable is set', () => {
    const cwd = tmpDir();
    fails(() => load(cwd, { ...API_URL, FLAGPOST_FAIL_ON: 'expired' }), /FLAGPOST_FAIL_ON is now FLAGPOST_SCAN_FAIL_ON/);
    fails(() => load(cwd, { ...API_URL, FLAGPOST_DIR: 'src' }), /FLAGPOST_DIR is now FLAGPOST_SCAN_DIR/);
  });
});
