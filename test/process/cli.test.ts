import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it, type TestContext } from 'node:test';
import SQLite from 'better-sqlite3';
import { freePort, startProcess, startServerProcess, waitForHealth } from '../support/process.ts';

// Issue 11, operator commands: an online SQLite backup taken while submissions are being written holds
// every submission acknowledged before it began and passes SQLite's integrity check; resetting the
// admin token replaces it (after a restart) without editing the database by hand.

/** Runs `npm run flagpost -- <args>` (the operator commands, src/cli.ts through tsx); `t.after` stops it. */
async function flagpost(t: TestContext, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startProcess(t, ['--import', 'tsx', 'src/cli.ts', ...args], { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env });
  let stdout = '';
  let stderr = '';
  run.child.stdout!.on('data', (d) => (stdout += d));
  run.child.stderr!.on('data', (d) => (stderr += d));
  const code = await run.exited;
  return { code, stdout, stderr };
}

describe('the flagpost operator commands', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-cli-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('backs up SQLite while 200 submissions are written: everything acknowledged before is in the copy', { timeout: 120_000 }, async (t) => {
    const dataDir = tempDir();
    const port = freePort();
    const token = 'cli-test-admin-token-0123456789';
    const env = { FLAGPOST_DATA_DIR: dataDir, FLAGPOST_ADMIN_TOKEN: token };
    const server = startServerProcess(t, { ...env, PORT: String(port), FLAGPOST_RATE_LIMIT_MAX: '0' });
    try {
      await waitForHealth(port);
      const base = `http://127.0.0.1:${port}`;
      const form = (await (
        await fetch(`${base}/admin/v1/forms`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{"name":"Contact"}',
        })
      ).json()) as { key: string };
      const acknowledged: string[] = [];
      let sent = 0;
      const writer = async () => {
        while (sent < 200) {
          const n = sent++;
          const res = await fetch(`${base}/v1/s/${form.key}?mode=rest`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ n, email: `person${n}@example.com`, message: 'x'.repeat(2000) }),
          });
          if (res.status === 200) acknowledged.push(((await res.json()) as { id: string }).id);
        }
      };
      const writers = Array.from({ length: 8 }, writer);
      while (acknowledged.length < 60) await new Promise((r) => setTimeout(r, 10));
      const before = [...acknowledged];
      const file = path.join(tempDir(), 'backup.db');
      const backup = await flagpost(t, ['backup', file], env);
      await Promise.all(writers);
      assert.equal(backup.code, 0, backup.stderr);
      assert.match(backup.stdout, /integrity ok/);
      // Issue 31 item 16: the database, its WAL and the backup hold password hashes and submissions: 0600.
      const mode = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);
      assert.equal(mode(file), '600');
      for (const name of ['flagpost.db', 'flagpost.db-wal', 'flagpost.db-shm']) assert.equal(mode(path.join(dataDir, name)), '600', name);
      assert.equal(acknowledged.length, 200);
      assert.ok(before.length < 200, 'the backup ran while submissions were still arriving');

      const copy = new SQLite(file, { readonly: true });
      try {
        assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
        const ids = new Set(
          copy
            .prepare('select id from submissions')
            .all()
            .map((row) => (row as { id: string }).id),
        );
        for (const id of before) assert.ok(ids.has(id), `acknowledged before the backup, missing from it: ${id}`);
        assert.ok(ids.size >= before.length && ids.size <= 200);
      } finally {
        copy.close();
      }
      // A second backup to the same file is refused rather than overwriting it.
      const again = await flagpost(t, ['backup', file], env);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /exists/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('resets the admin token: the new one works after a restart, the old one and its sessions no longer', { timeout: 60_000 }, async (t) => {
    const dataDir = tempDir();
    const port = freePort();
    const env = { FLAGPOST_DATA_DIR: dataDir };
    const first = startServerProcess(t, { ...env, PORT: String(port) });
    await waitForHealth(port);
    const old = /(fpa_[\w-]+)/.exec(first.output())![1]!;
    const signedIn = await fetch(`http://127.0.0.1:${port}/admin/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: old }),
    });
    assert.equal(signedIn.status, 201);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const reset = await flagpost(t, ['reset-admin-token'], env);
    assert.equal(reset.code, 0, reset.stderr);
    const fresh = /(fpa_[\w-]+)/.exec(reset.stdout)![1]!;
    assert.notEqual(fresh, old);
    first.child.kill('SIGTERM');
    await first.exited;

    const second = startServerProcess(t, { ...env, PORT: String(port) });
    try {
      await waitForHealth(port);
      const call = (token: string) => fetch(`http://127.0.0.1:${port}/admin/v1/projects`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal((await call(fresh)).status, 200);
      assert.equal((await call(old)).status, 401);
      // A dashboard session opened with the old token ended with it (issue 20).
      assert.equal((await fetch(`http://127.0.0.1:${port}/admin/v1/projects`, { headers: { cookie } })).status, 401);
      const audit = await fetch(`http://127.0.0.1:${port}/admin/v1/audit?entity=settings`, { headers: { authorization: `Bearer ${fresh}` } });
      const entries = ((await audit.json()) as { entries: Array<{ action: string; actor: { label: string } }> }).entries;
      assert.deepEqual(
        entries.map((e) => [e.action, e.actor.label]),
        [['admin_token.reset', 'command line']],
      );
      assert.doesNotMatch(second.output(), /fpa_/, 'no new token printed: one is stored');
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
    const pinned = await flagpost(t, ['reset-admin-token'], { ...env, FLAGPOST_ADMIN_TOKEN: 'a-token-from-the-environment' });
    assert.equal(pinned.code, 2);
    assert.match(pinned.stderr, /FLAGPOST_ADMIN_TOKEN is set/);
  });

  it('converts an older SQLite file so that deleted data gives its space back (vacuum)', async (t) => {
    const dataDir = tempDir();
    const file = path.join(dataDir, 'flagpost.db');
    const old = new SQLite(file);
    old.exec('create table t (x blob)');
    const insert = old.prepare('insert into t values (?)');
    for (let i = 0; i < 200; i++) insert.run(Buffer.alloc(8192, i));
    old.exec('delete from t');
    old.close();
    const before = fs.statSync(file).size;
    assert.equal(new SQLite(file).pragma('auto_vacuum', { simple: true }), 0);
    const res = await flagpost(t, ['vacuum'], { FLAGPOST_DATA_DIR: dataDir });
    assert.equal(res.code, 0, res.stderr);
    const db = new SQLite(file);
    assert.equal(db.pragma('auto_vacuum', { simple: true }), 2, 'incremental from now on');
    db.close();
    assert.ok(fs.statSync(file).size < before / 10, `${fs.statSync(file).size} < ${before}`);
    const onPostgres = await flagpost(t, ['vacuum'], { DATABASE_URL: 'postgres://flagpost@127.0.0.1:5432/none' });
    assert.equal(onPostgres.code, 2);
    assert.match(onPostgres.stderr, /VACUUM FULL/);
  });

  it('explains pg_dump on PostgreSQL and answers usage errors with exit code 2', async (t) => {
    const onPostgres = await flagpost(t, ['backup', '/tmp/never-written.db'], { DATABASE_URL: 'postgres://flagpost@127.0.0.1:5432/none' });
    assert.equal(onPostgres.code, 2);
    assert.match(onPostgres.stderr, /pg_dump --format=custom/);
    assert.equal(fs.existsSync('/tmp/never-written.db'), false);
    assert.equal((await flagpost(t, ['backup'], {})).code, 2);
    assert.equal((await flagpost(t, ['frobnicate'], {})).code, 2);
    const help = await flagpost(t, ['help'], {});
    assert.equal(help.code, 0);
    assert.match(help.stdout, /backup <file>/);
  });
});
