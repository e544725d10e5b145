import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it, type TestContext } from 'node:test';
import { freePort, startProcess, startServerProcess, waitForHealth } from '../support/process.ts';

// Issue 21, flags as code from the command line: `npm run flagpost -- export` and `apply [--dry-run]`
// talk to a running (built) Flagpost through the admin API with an editor's personal access token,
// as they would from CI against a remote server.

const ADMIN = 'cli-document-admin-token-0123456789';
const PASSWORD = 'a long test password 0123';

async function flagpost(t: TestContext, args: string[], env: Record<string, string>) {
  const run = startProcess(t, ['--import', 'tsx', 'src/cli.ts', ...args], { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env });
  let stdout = '';
  let stderr = '';
  run.child.stdout!.on('data', (d) => (stdout += d));
  run.child.stderr!.on('data', (d) => (stderr += d));
  const code = await run.exited;
  return { code, stdout, stderr };
}

describe('flags as code on the command line', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('exports a project to YAML, applies an edit with a dry run first, and the export shows it', { timeout: 120_000 }, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-doc-'));
    dirs.push(dir);
    const port = freePort();
    startServerProcess(t, { FLAGPOST_DATA_DIR: path.join(dir, 'data'), FLAGPOST_ADMIN_TOKEN: ADMIN, PORT: String(port), FLAGPOST_RATE_LIMIT_MAX: '0' });
    await waitForHealth(port);
    const base = `http://127.0.0.1:${port}`;
    const call = async (method: string, route: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${ADMIN}` }) => {
      const res = await fetch(`${base}${route}`, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as any, headers: res.headers };
    };
    // An owner first (the first member must be one), then the editor whose access token the commands use.
    for (const [email, role] of [
      ['owner@example.com', 'owner'],
      ['ci@example.com', 'editor'],
    ]) {
      assert.equal((await call('POST', '/admin/v1/users', { email, password: PASSWORD, role })).status, 201);
    }
    const signIn = await fetch(`${base}/admin/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ci@example.com', password: PASSWORD }),
    });
    assert.equal(signIn.status, 201);
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const minted = await call('POST', '/admin/v1/me/tokens', { name: 'ci', password: PASSWORD }, { cookie, origin: base });
    assert.equal(minted.status, 201, JSON.stringify(minted.json));
    const env = { FLAGPOST_URL: base, FLAGPOST_TOKEN: minted.json.token as string };

    const project = (await call('POST', '/admin/v1/projects', { name: 'Cli shop' })).json;
    assert.equal((await call('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'dark-mode', description: 'Dark theme' })).status, 201);

    const file = path.join(dir, 'cli-shop.yaml');
    const exported = await flagpost(t, ['export', project.key, file], env);
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stdout, /1 flags, 0 segments/);
    const yaml = fs.readFileSync(file, 'utf8');
    assert.match(yaml, /^version: 1\nproject: Cli shop\nenvironments:\n {2}- development\n/);
    assert.match(yaml, /dark-mode:\n {4}type: boolean\n/);

    // Switch dark mode on in production by editing the YAML, as a reviewer would see it in a pull request.
    const edited = yaml.replace(/( {6}production:\n {8}variants:\n {10}on: true\n {10}off: false\n {8}defaultVariant: )off/, '$1on');
    assert.notEqual(edited, yaml, 'the edit applies to the exported text');
    fs.writeFileSync(file, edited);

    const dry = await flagpost(t, ['apply', file, '--dry-run', '--project', project.key], env);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(
      dry.stdout,
      `Dry run: applying ${file} to project ${project.key} would make 1 change(s):\n  ~ flag dark-mode in production (defaultVariant)\n`,
    );
    const prodKey = project.environments[2].key as string;
    const read = async () => (await fetch(`${base}/v1/flags/dark-mode`, { headers: { 'x-project-key': project.key, 'x-environment-key': prodKey } })).json();
    assert.equal(((await read()) as { enabled: boolean }).enabled, false, 'a dry run changes nothing');

    const applied = await flagpost(t, ['apply', file, '--project', project.key], env);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /^Applied .* 1 change\(s\):\n {2}~ flag dark-mode in production \(defaultVariant\)\n$/);
    assert.equal(((await read()) as { enabled: boolean }).enabled, true);
    const again = await flagpost(t, ['apply', file, '--project', project.key], env);
    assert.equal(again.stdout, `Project ${project.key} already matches ${file}.\n`);

    const reexport = path.join(dir, 'again.yaml');
    assert.equal((await flagpost(t, ['export', project.key, reexport], env)).code, 0);
    assert.equal(fs.readFileSync(reexport, 'utf8'), edited, 'the export is the applied document, byte for byte');

    // Production protected: its change waits in a change request, development is applied.
    assert.equal((await call('PATCH', `/admin/v1/projects/${project.key}/environments/${prodKey}`, { protected: true })).status, 200);
    const both = edited
      .replace(/( {6}development:\n {8}variants:\n {10}on: true\n {10}off: false\n {8}defaultVariant: )off/, '$1on')
      .replace(/( {6}production:\n {8}variants:\n {10}on: true\n {10}off: false\n {8}defaultVariant: )on/, '$1off');
    assert.equal(both.match(/defaultVariant: on/g)?.length, 1, 'development switched on, production off');
    fs.writeFileSync(file, both);
    const protectedDry = await flagpost(t, ['apply', file, '--dry-run', '--project', project.key], env);
    assert.equal(protectedDry.code, 0, protectedDry.stderr);
    assert.equal(
      protectedDry.stdout,
      `Dry run: applying ${file} to project ${project.key} would make 1 change(s):\n` +
        '  ~ flag dark-mode in development (defaultVariant)\n' +
        'production is protected: a change request would be opened with 1 change(s):\n' +
        '  ~ flag dark-mode in production (defaultVariant)\n',
    );
    const openRequests = async () =>
      (await call('GET', `/admin/v1/projects/${project.key}/change-requests`)).json.changeRequests as Array<{ id: string; title: string; status: string }>;
    assert.deepEqual(await openRequests(), [], 'a dry run opens no change request');
    const proposed = await flagpost(t, ['apply', file, '--project', project.key], env);
    assert.equal(proposed.code, 0, proposed.stderr);
    const requests = await openRequests();
    assert.equal(requests.length, 1, 'one change request');
    const request = requests[0]!;
    assert.equal(request.title, 'Apply cli-shop.yaml to production');
    assert.equal(request.status, 'in_review');
    assert.equal(
      proposed.stdout,
      `Applied ${file} to project ${project.key}: 1 change(s):\n` +
        '  ~ flag dark-mode in development (defaultVariant)\n' +
        `production is protected: change request ${request.id} opened with 1 change(s), waiting for review at ${base}/projects/${project.key}/changes/${request.id}\n` +
        '  ~ flag dark-mode in production (defaultVariant)\n',
    );
    assert.equal(((await read()) as { enabled: boolean }).enabled, true, 'production is unchanged until the request is applied');
    // Applied again (CI on every push): the open request already proposes it; nothing is opened.
    const at = `${base}/projects/${project.key}/changes/${request.id}`;
    for (const dryRun of [true, false]) {
      const repeated = await flagpost(t, ['apply', file, '--project', project.key, ...(dryRun ? ['--dry-run'] : [])], env);
      assert.equal(repeated.code, 0, repeated.stderr);
      assert.equal(
        repeated.stdout,
        `${dryRun ? 'Dry run: applying' : 'Applied'} ${file} to project ${project.key}: no direct change.\n` +
          `production is protected: change request ${request.id} already proposes these 1 change(s), at ${at}\n` +
          '  ~ flag dark-mode in production (defaultVariant)\n',
      );
    }
    // The document changes production's description too: the same request is updated.
    const described = both.replace(/( {6}production:\n(?: {8}.*\n| {10}.*\n)*? {8}description: )Dark theme/, '$1Dark theme, everywhere');
    assert.notEqual(described, both, 'the edit applies to the exported text');
    fs.writeFileSync(file, described);
    const revised = await flagpost(t, ['apply', file, '--project', project.key], env);
    assert.equal(revised.code, 0, revised.stderr);
    assert.equal(
      revised.stdout,
      `Applied ${file} to project ${project.key}: no direct change.\n` +
        `production is protected: change request ${request.id} updated to 1 change(s), its approvals reset, waiting for review at ${at}\n` +
        '  ~ flag dark-mode in production (defaultVariant, description)\n',
    );
    assert.deepEqual(
      (await openRequests()).map((r) => r.id),
      [request.id],
      'still one change request',
    );
    const bypass = await flagpost(t, ['apply', file, '--project', project.key, '--bypass-protection'], env);
    assert.equal(bypass.code, 1, 'an editor may not bypass');
    assert.match(bypass.stderr, /^Flagpost answered 403/);
    fs.writeFileSync(file, edited);

    const refused = await flagpost(t, ['apply', file, '--project', 'nope'], env);
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr, 'Flagpost answered 404: Project with key nope does not exist\n');
    // An Unleash client state, imported into a new project from the command line.
    const unleashFile = path.join(dir, 'unleash.json');
    fs.writeFileSync(
      unleashFile,
      JSON.stringify({
        version: 2,
        features: [
          {
            name: 'search-v2',
            enabled: true,
            strategies: [{ name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: 'search-v2' } }],
          },
          { name: 'host-only', enabled: true, strategies: [{ name: 'applicationHostname', parameters: { hostNames: 'web-1' } }] },
        ],
      }),
    );
    const migrated = await flagpost(t, ['import', 'unleash', unleashFile, '--name', 'Migrated', '--environment', 'production'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /^Imported .* into project \S+: 3 change\(s\):\n {2}\+ project Migrated\n {2}\+ flag search-v2\n {2}\+ flag host-only\n/);
    assert.match(
      migrated.stdout,
      /Not carried over \(2\):\n {2}search-v2 in production: flexibleRollout at 50% with default stickiness: .*\n {2}host-only in production: strategy applicationHostname: /,
    );

    // Forms as code (issue 34): a form's CAPTCHA secret leaves only as a $NAME reference, and apply fills
    // it in from its environment.
    const formShop = (await call('POST', '/admin/v1/projects', { name: 'Form shop' })).json;
    const form = await call('POST', '/admin/v1/forms', {
      name: 'Contact',
      projectKey: formShop.key,
      captcha: { provider: 'turnstile', secret: 'first-secret-value' },
      fieldRules: { required: ['email'] },
    });
    assert.equal(form.status, 201, JSON.stringify(form.json));
    const formsFile = path.join(dir, 'form-shop.yaml');
    const formsExport = await flagpost(t, ['export', formShop.key, formsFile], env);
    assert.equal(formsExport.code, 0, formsExport.stderr);
    assert.match(formsExport.stdout, /0 flags, 0 segments, 1 forms \(secrets as \$NAME references\)\.\n$/);
    const formsYaml = fs.readFileSync(formsFile, 'utf8');
    const variable = `FLAGPOST_FORM_${(form.json.key as string).toUpperCase().replace(/[^A-Z0-9]/g, '_')}_CAPTCHA_SECRET`;
    assert.ok(formsYaml.includes(`secret: $${variable}`), formsYaml);
    assert.ok(!formsYaml.includes('first-secret-value'), 'the secret is not exported');
    const unresolved = await flagpost(t, ['apply', formsFile, '--project', formShop.key], env);
    assert.equal(unresolved.stdout, `Project ${formShop.key} already matches ${formsFile}.\n`, 'an unresolved reference keeps the secret');
    for (const expected of [`  ~ form ${form.json.key} (captcha)\n`, undefined]) {
      const resolved = await flagpost(t, ['apply', formsFile, '--project', formShop.key], { ...env, [variable]: 'rotated-secret-value' });
      assert.equal(resolved.code, 0, resolved.stderr);
      assert.equal(
        resolved.stdout,
        expected ? `Applied ${formsFile} to project ${formShop.key}: 1 change(s):\n${expected}` : `Project ${formShop.key} already matches ${formsFile}.\n`,
      );
    }

    const noToken = await flagpost(t, ['apply', file], { FLAGPOST_URL: base });
    assert.equal(noToken.code, 2);
    assert.match(noToken.stderr, /^Set FLAGPOST_TOKEN/);
  });
});
