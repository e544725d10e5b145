import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { openDb } from '../../src/db/connect.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, dialects } from '../support/context.ts';
import { freePort, startServerProcess as start, waitForHealth } from '../support/process.ts';

describe('the server process', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('names every bad variable at once and exits non-zero', async (t) => {
    const { exited, output } = start(t, { PORT: 'x', DATABASE_URL: 'mysql://nope', LOG_LEVEL: 'loud' });
    assert.equal(await exited, 1);
    for (const name of ['PORT', 'DATABASE_URL', 'LOG_LEVEL']) assert.match(output(), new RegExp(name));
  });

  it('starts on SQLite, prints a created admin token once, and stops cleanly on SIGTERM', async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-proc-'));
    dirs.push(dataDir);
    const port = freePort();
    const first = start(t, { PORT: String(port), FLAGPOST_DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    await waitForHealth(port);
    const token = /(fpa_[\w-]+)/.exec(first.output())?.[1];
    assert.ok(token, first.output());
    // Issue 31 item 16: the start log says where the dashboard is.
    for (let i = 0; i < 50 && !first.output().includes('the dashboard is at'); i++) await new Promise((r) => setTimeout(r, 100));
    assert.match(first.output(), new RegExp(`the dashboard is at http://localhost:${port}/`));
    assert.equal((fs.statSync(path.join(dataDir, 'flagpost.db')).mode & 0o777).toString(8), '600', "the database is the owner's only");
    const res = await fetch(`http://127.0.0.1:${port}/admin/v1/projects`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    assert.ok(fs.existsSync(path.join(dataDir, 'flagpost.db')));

    const second = start(t, { PORT: String(port), FLAGPOST_DATA_DIR: dataDir });
    await waitForHealth(port);
    assert.doesNotMatch(second.output(), /fpa_/);
    const again = await fetch(`http://127.0.0.1:${port}/admin/v1/projects`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(again.status, 200, 'the token survives a restart');
    second.child.kill('SIGINT');
    assert.equal(await second.exited, 0);
  });

  it('stops cleanly on SIGTERM, before its 10 s grace period, while stdout is a pipe nobody reads', async (t) => {
    // Issue 19: the built server used to hang forever here (a thread-pool write blocked on the full pipe,
    // and process.exit waited for it); the TypeScript sources through tsx did not.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-proc-'));
    dirs.push(dataDir);
    const port = freePort();
    const server = start(
      t,
      { PORT: String(port), FLAGPOST_DATA_DIR: dataDir, FLAGPOST_ADMIN_TOKEN: 'stalled-admin-token-0123456789', LOG_LEVEL: 'info' },
      { readStdout: false },
    );
    await waitForHealth(port);
    // One log line of about 1.2 KB per request: 1.2 MB, far more than the pipe holds.
    for (let round = 0; round < 20; round++) {
      const statuses = await Promise.all(
        Array.from({ length: 50 }, () => fetch(`http://127.0.0.1:${port}/healthz?padding=${'x'.repeat(1000)}`).then((r) => r.status)),
      );
      assert.deepEqual([...new Set(statuses)], [200]);
    }
    const stopping = Date.now();
    server.child.kill('SIGTERM');
    // Exit code 0 is a clean shutdown: not the 10 s grace period's forced exit (1), not a hang. Idle, it
    // takes about 1.2 s (the last log lines wait for the stuck pipe 1 s at most).
    const code = await Promise.race([server.exited, new Promise<string>((r) => setTimeout(() => r('still running'), 12_000))]);
    t.diagnostic(`exited with ${code} after ${Date.now() - stopping} ms`);
    assert.equal(code, 0);
  });

  it('runs from the bundle that npm start builds, loading the preview renderer on demand', async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-proc-'));
    dirs.push(dataDir);
    const port = freePort();
    const token = 'bundle-admin-token-0123456789';
    const server = start(t, { PORT: String(port), FLAGPOST_DATA_DIR: dataDir, FLAGPOST_ADMIN_TOKEN: token });
    await waitForHealth(port);
    const base = `http://127.0.0.1:${port}`;
    const admin = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const project = await (await fetch(`${base}/admin/v1/projects`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'B' }) })).json();
    const doc = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Hi <b>' }] }] };
    const created = await fetch(`${base}/admin/v1/projects/${project.key}/flags`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ slug: 'p', isPreview: true, previewContent: doc }),
    });
    assert.equal(created.status, 201);
    const res = await fetch(`${base}/v1/flags/preview`, { headers: { 'x-project-key': project.key, 'x-environment-key': project.environments[0].key } });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).flags[0].previewContent, '<p>Hi &lt;b&gt;</p>');
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  });

  const canReplace = fs.existsSync('/proc/self/cmdline') && typeof (process as { execve?: unknown }).execve === 'function';
  it('runs with the young generation of Node 20 (src/boot.ts), in the process it was started as, unless one is given', { skip: !canReplace }, async (t) => {
    // 16 MB at most (a heap limit of 2 GB or more), less on smaller machines.
    const cases: Array<[Record<string, string>, RegExp | undefined]> = [
      [{}, /^--max-semi-space-size=([1-9]|1[0-6])$/],
      [{ NODE_OPTIONS: '--max-semi-space-size=8' }, undefined],
    ];
    for (const [env, flag] of cases) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-proc-'));
      dirs.push(dataDir);
      const port = freePort();
      const server = start(t, { PORT: String(port), FLAGPOST_DATA_DIR: dataDir, ...env });
      await waitForHealth(port);
      // The process that answers is the child that was started (same pid), now with the flag.
      const args = fs.readFileSync(`/proc/${server.child.pid}/cmdline`, 'utf8').split('\0');
      const given = args.find((arg) => arg.startsWith('--max-semi-space-size'));
      if (flag) assert.match(given ?? '', flag, args.join(' '));
      else assert.equal(given, undefined, args.join(' '));
      assert.ok(
        args.some((arg) => arg.endsWith('dist/main.js')),
        args.join(' '),
      );
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);
    }
  });
});

for (const dialect of dialects()) {
  describe(`migrations [${dialect}]`, () => {
    it('run once when two instances start at the same time', async () => {
      const database = await createTestDatabase(dialect);
      const url = database.env.DATABASE_URL;
      const a = openDb({ databaseUrl: url, dataDir: database.env.FLAGPOST_DATA_DIR! });
      const b = openDb({ databaseUrl: url, dataDir: database.env.FLAGPOST_DATA_DIR! });
      try {
        await Promise.all([migrateToLatest(a.db), migrateToLatest(b.db)]);
        const rows = await a.db
          .selectFrom('kysely_migration' as never)
          .selectAll()
          .execute();
        const names = rows.map((r) => (r as { name: string }).name);
        assert.equal(new Set(names).size, names.length, 'no migration recorded twice');
        assert.ok(names.includes('0001_flags'));
        await migrateToLatest(a.db);
      } finally {
        await a.close();
        await b.close();
        await database.drop();
      }
    });
  });
}
