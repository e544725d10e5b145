import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDb } from '../src/db/connect.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/context.ts';
import { freePort, type ServerProcess, startServerProcess, waitForHealth } from '../test/support/process.ts';
import { startTcpProxy } from '../test/support/tcp-proxy.ts';

const TOKEN = 'outage-admin-token-0123456789';
const admin = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue 8: a PostgreSQL outage must not take the process down. The server runs as a real process whose
 * only way to its database is a TCP proxy this test cuts and restores.
 */
describe('a PostgreSQL outage [postgres]', { skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let database: TestDatabase;
  let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
  let server: ServerProcess;
  const cleanups: Array<() => unknown> = [];
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  let flagHeaders: Record<string, string>;
  let formKey: string;

  before(async () => {
    database = await createTestDatabase('postgres');
    const direct = new URL(database.env.DATABASE_URL!);
    const handle = openDb({ databaseUrl: direct.toString(), dataDir: database.env.FLAGPOST_DATA_DIR! });
    await migrateToLatest(handle.db);
    await handle.close();
    proxy = await startTcpProxy(Number(direct.port || 5432), direct.hostname);
    const viaProxy = new URL(direct);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    server = startServerProcess(
      { after: (fn) => cleanups.push(fn) },
      {
        ...database.env,
        DATABASE_URL: viaProxy.toString(),
        PORT: String(port),
        FLAGPOST_ADMIN_TOKEN: TOKEN,
        FLAGPOST_OUTBOX_POLL_MS: '100',
        LOG_LEVEL: 'info',
      },
    );
    await waitForHealth(port);
    const project = await (await fetch(`${base}/admin/v1/projects`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Shop' }) })).json();
    const created = await fetch(`${base}/admin/v1/projects/${project.key}/flags`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ slug: 'checkout', enabled: true }),
    });
    assert.equal(created.status, 201);
    flagHeaders = { 'x-project-key': project.key, 'x-environment-key': project.environments[0].key };
    formKey = (await (await fetch(`${base}/admin/v1/forms`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Contact' }) })).json()).key;
    // Warm the read model.
    assert.equal((await fetch(`${base}/v1/flags/checkout`, { headers: flagHeaders })).status, 200);
  });

  after(async () => {
    for (const cleanup of cleanups) await cleanup();
    await proxy?.close();
    await database?.drop();
  });

  const submit = () =>
    fetch(`${base}/v1/s/${formKey}?mode=rest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com' }),
    });

  it('keeps the process up, answers warm reads, refuses writes with 503 and recovers', async (t) => {
    await proxy.cut();
    await sleep(1500);
    assert.equal(server.child.exitCode, null, `the process exited:\n${server.output()}`);

    const reads = await Promise.all(Array.from({ length: 50 }, () => fetch(`${base}/v1/flags/checkout`, { headers: flagHeaders })));
    assert.deepEqual([...new Set(reads.map((r) => r.status))], [200], 'warm flag reads keep answering from the read model');
    assert.equal((await reads[0]!.json()).enabled, true);

    const refused = await submit();
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '5');
    assert.deepEqual((await refused.json()).message, 'Service unavailable');
    const write = await fetch(`${base}/admin/v1/projects`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Other' }) });
    assert.equal(write.status, 503);
    assert.equal(write.headers.get('retry-after'), '5');
    assert.deepEqual(await write.json(), { error: true, message: 'Service unavailable' });
    assert.equal((await fetch(`${base}/healthz`)).status, 503);
    // Issue 23: not ready (take it out of the load balancer), but alive (do not restart it for this).
    const readiness = await fetch(`${base}/readyz`);
    assert.equal(readiness.status, 503);
    assert.deepEqual(await readiness.json(), { error: true, message: 'Service unavailable', status: 'database-unavailable' });
    assert.equal((await fetch(`${base}/livez`)).status, 200);

    // A 10 s outage in all: reads keep answering throughout.
    const deadline = Date.now() + 8000;
    while (Date.now() < deadline) {
      const read = await fetch(`${base}/v1/flags/checkout`, { headers: flagHeaders });
      assert.equal(read.status, 200);
      assert.equal((await fetch(`${base}/livez`)).status, 200, '/livez stays 200 throughout the outage');
      await sleep(250);
    }
    assert.equal(server.child.exitCode, null, 'still up after 10 s of outage');
    await proxy.restore();
    const restoredAt = Date.now();
    await waitForHealth(port, 15_000);
    assert.equal((await fetch(`${base}/readyz`)).status, 200, 'ready again once the database answers');
    let accepted: Response | undefined;
    for (let i = 0; i < 100; i++) {
      accepted = await submit();
      if (accepted.status === 200) break;
      await sleep(100);
    }
    assert.equal(accepted!.status, 200, 'submissions are accepted again');
    t.diagnostic(`recovered ${Date.now() - restoredAt} ms after the database came back`);
    const projects = await fetch(`${base}/admin/v1/projects`, { headers: admin });
    assert.equal(projects.status, 200);
    assert.equal((await projects.json()).projects.length, 1, 'the refused write changed nothing');
    const outboxLines = server
      .output()
      .split('\n')
      .filter((line) => line.includes('outbox delivery failed'));
    assert.equal(outboxLines.length, 1, `the outbox loop logs an outage once:\n${outboxLines.join('\n')}`);
    // The loop retries with backoff (at most 5 s apart): its recovery is logged once it ran again.
    for (let i = 0; i < 80 && !server.output().includes('outbox delivery works again'); i++) await sleep(100);
    assert.ok(server.output().includes('outbox delivery works again'), 'and its recovery once');
    assert.ok(!/Unhandled|unhandledRejection/i.test(server.output()), server.output());
  });
});
