import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import pg from 'pg';
import { openDb } from '../../src/db/connect.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { ADMIN_TOKEN, createTestContext, createTestDatabase, dialects } from '../support/context.ts';
import { freePort, startProcess, startServerProcess } from '../support/process.ts';

// Issue 23, health: /livez never asks the database, /readyz says 503 while the server starts, while its
// database is away and from the start of a drain; `flagpost healthcheck` asks them for container health
// checks; on SIGTERM /readyz turns 503 first, event streams are told to reconnect, then requests drain.

const PROTO = path.resolve(import.meta.dirname, '../../src/flagd-sync/flagd-sync.proto');
const sync = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO, { defaults: true })) as unknown as {
  flagd: { sync: { v1: { FlagSyncService: grpc.ServiceClientConstructor } } };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `flagpost healthcheck` as the image runs it (the built dist/cli.js), or through `npm run flagpost` (tsx). */
async function healthcheck(t: TestContext, port: number, args: string[] = [], built = true): Promise<{ code: number | null; output: string }> {
  const run = startProcess(t, [...(built ? ['dist/cli.js'] : ['--import', 'tsx', 'src/cli.ts']), 'healthcheck', ...args], {
    PATH: process.env.PATH ?? '',
    PORT: String(port),
  });
  const code = await run.exited;
  return { code, output: run.output() };
}

async function waitFor(url: string, status: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const got = await fetch(url).then(
      async (r) => (await r.arrayBuffer(), r.status),
      () => undefined,
    );
    if (got === status) return;
    await sleep(100);
  }
  throw new Error(`no ${status} from ${url} within ${timeoutMs} ms`);
}

/** An SSE stream read by blocks; `ended` resolves with everything it carried when the server ends it. */
function openStream(url: string): Promise<{ text: () => string; ended: Promise<number> }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        resolve({ text: () => text, ended: new Promise((done) => res.on('close', () => done(Date.now()))) });
      })
      .on('error', reject);
  });
}

for (const dialect of dialects()) {
  describe(`health endpoints [${dialect}]`, () => {
    it('answers /livez without the database, and /readyz 503 without the database or once draining', async (t) => {
      const ctx = await createTestContext(dialect);
      t.after(async () => {
        await ctx.app.close();
        await ctx.database.drop();
      });
      const get = async (url: string) => {
        const res = await ctx.app.inject({ method: 'GET', url });
        return { status: res.statusCode, body: res.json(), cache: res.headers['cache-control'] };
      };
      assert.deepEqual(await get('/livez'), { status: 200, body: { status: 'ok' }, cache: 'no-store' });
      assert.deepEqual(await get('/readyz'), { status: 200, body: { status: 'ready' }, cache: 'no-store' });
      // Issue 31 item 16: each health body ends with a newline (curl in a terminal).
      for (const url of ['/healthz', '/livez', '/readyz']) assert.ok((await ctx.app.inject({ method: 'GET', url })).body.endsWith('}\n'), url);

      // The database goes away: liveness does not care, readiness and /healthz do.
      await ctx.services.stop();
      await ctx.handle.close();
      assert.deepEqual(await get('/livez'), { status: 200, body: { status: 'ok' }, cache: 'no-store' });
      const unavailable = { error: true, message: 'Service unavailable' };
      assert.deepEqual(await get('/readyz'), { status: 503, body: { ...unavailable, status: 'database-unavailable' }, cache: 'no-store' });
      assert.deepEqual(await get('/healthz'), { status: 503, body: unavailable, cache: 'no-store' });

      ctx.services.readiness.drain();
      assert.deepEqual(await get('/readyz'), { status: 503, body: { ...unavailable, status: 'draining' }, cache: 'no-store' });
      assert.equal((await get('/livez')).status, 200);
    });

    it('on SIGTERM turns /readyz 503 first, then tells event streams to reconnect, then drains requests and exits 0', { timeout: 120_000 }, async (t) => {
      const database = await createTestDatabase(dialect);
      t.after(() => database.drop());
      const port = freePort();
      const syncPort = freePort();
      // Long enough for two `flagpost healthcheck` processes to start and ask while draining on a loaded
      // machine (each loads the server bundle: seconds under a load of 25 on two cores).
      const drainDelayMs = 10_000;
      const base = `http://127.0.0.1:${port}`;
      const server = startServerProcess(t, {
        ...database.env,
        PORT: String(port),
        FLAGPOST_ADMIN_TOKEN: ADMIN_TOKEN,
        FLAGPOST_FLAGD_SYNC_PORT: String(syncPort),
        FLAGPOST_DRAIN_DELAY_MS: String(drainDelayMs),
        FLAGPOST_RATE_LIMIT_MAX: '0',
      });
      await waitFor(`${base}/readyz`, 200).catch((error) => assert.fail(`${error}\n${server.output()}`));
      assert.equal((await fetch(`${base}/livez`)).status, 200);
      const ready = await healthcheck(t, port, [], false);
      assert.equal(ready.code, 0, `npm run flagpost -- healthcheck: ${ready.output}`);
      assert.equal((await healthcheck(t, port, ['--live'])).code, 0);

      const admin = async (method: string, url: string, body?: unknown) => {
        const res = await fetch(`${base}${url}`, {
          method,
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        assert.ok(res.status < 300, `${method} ${url}: ${res.status}`);
        return (await res.json()) as Record<string, unknown>;
      };
      const project = (await admin('POST', '/admin/v1/projects', { name: 'Drain' })) as { key: string; environments: Array<{ key: string }> };
      const envKey = project.environments[0]!.key;
      await admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'checkout', enabled: true });
      const form = (await admin('POST', '/admin/v1/forms', { name: 'Contact' })) as { key: string };
      const keys = { 'x-project-key': project.key, 'x-environment-key': envKey };

      const bulk = await fetch(`${base}/ofrep/v1/evaluate/flags`, { method: 'POST', headers: { ...keys, 'content-type': 'application/json' }, body: '{}' });
      const streamUri = ((await bulk.json()) as { eventStreams: Array<{ endpoint: { requestUri: string } }> }).eventStreams[0]!.endpoint.requestUri;
      const sse = await openStream(base + streamUri);

      const { selector } = (await admin('POST', `/admin/v1/projects/${project.key}/environments/${envKey}/flagd-sync-token`)) as { selector: string };
      const client = new sync.flagd.sync.v1.FlagSyncService(`127.0.0.1:${syncPort}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
        SyncFlags(req: unknown, md: grpc.Metadata): grpc.ClientReadableStream<unknown>;
      };
      t.after(() => client.close());
      const md = new grpc.Metadata();
      md.set('flagd-selector', selector);
      const grpcStream = client.SyncFlags({ selector }, md);
      const first = new Promise((resolve, reject) => grpcStream.once('data', resolve).once('error', reject));
      const grpcEnd = new Promise<{ at: number; code: number }>((resolve) =>
        grpcStream.on('error', (e: grpc.ServiceError) => resolve({ at: Date.now(), code: e.code })),
      );
      await first;

      // A submission whose body is still arriving when the drain begins: it is answered, not cut.
      const slow = new Promise<number>((resolve, reject) => {
        const req = http.request(`${base}/v1/s/${form.key}?mode=rest`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
        req.write('{"email":');
        sse.ended.then(() => setTimeout(() => req.end('"ada@example.com"}'), 300));
      });
      await sleep(200);

      const signalled = Date.now();
      server.child.kill('SIGTERM');
      await waitFor(`${base}/readyz`, 503, 2000);
      // Both probes at once, as soon as the drain shows: the server stops listening when the delay ends.
      const probes = Promise.all([healthcheck(t, port), healthcheck(t, port, ['--live'])]);
      const draining = await fetch(`${base}/readyz`);
      assert.deepEqual(await draining.json(), { error: true, message: 'Service unavailable', status: 'draining' });
      assert.equal((await fetch(`${base}/livez`)).status, 200, 'alive while draining');
      assert.equal((await fetch(`${base}/v1/flags/checkout`, { headers: keys })).status, 200, 'still serving while the load balancer notices');
      const [unready, live] = await probes;
      assert.equal(unready.code, 1, unready.output);
      assert.match(unready.output, /503.*draining/);
      assert.equal(live.code, 0, live.output);

      const sseEnd = await sse.ended;
      const grpcEnded = await grpcEnd;
      assert.ok(sseEnd - signalled >= drainDelayMs - 200, `the event stream ended ${sseEnd - signalled} ms after SIGTERM, before the drain delay`);
      assert.match(sse.text(), /retry: \d+\n\n$/, 'the stream ends with a reconnection delay');
      assert.equal(grpcEnded.code, grpc.status.UNAVAILABLE, 'flagd providers retry on UNAVAILABLE');
      assert.ok(grpcEnded.at - signalled >= drainDelayMs - 200);
      assert.equal(await slow, 200, 'the request in flight is answered');
      assert.equal(await server.exited, 0, server.output());
      const gone = await healthcheck(t, port);
      assert.equal(gone.code, 1);
      assert.match(gone.output, /no answer/);
    });
  });
}

describe('readiness while migrations run [postgres]', { skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set' }, () => {
  it('answers /livez 200 and /readyz 503 starting while another instance holds the migration lock, then becomes ready', { timeout: 120_000 }, async (t) => {
    const database = await createTestDatabase('postgres');
    const migrating = new pg.Client({ connectionString: database.env.DATABASE_URL });
    let connected = false;
    // One cleanup, in this order: a failed assertion must not leave the lock held while the schema is dropped.
    t.after(async () => {
      if (connected) {
        await migrating.query('select pg_advisory_unlock_all()').catch(() => undefined);
        await migrating.query('rollback').catch(() => undefined);
        await migrating.end().catch(() => undefined);
      }
      await database.drop();
    });
    const handle = openDb({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.FLAGPOST_DATA_DIR! });
    await migrateToLatest(handle.db);
    await handle.close();
    // What an instance migrating at the same moment holds: Kysely's PostgreSQL migrator takes a
    // session-level advisory lock (its id below, from kysely's postgres adapter) for the whole run.
    await migrating.connect();
    connected = true;
    await migrating.query('begin');
    await migrating.query('select pg_advisory_lock(3853314791062309107)');

    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = startServerProcess(t, { ...database.env, PORT: String(port), FLAGPOST_ADMIN_TOKEN: ADMIN_TOKEN });
    await waitFor(`${base}/livez`, 200).catch((error) => assert.fail(`${error}\n${server.output()}`));
    const starting = await fetch(`${base}/readyz`);
    assert.equal(starting.status, 503);
    assert.deepEqual(await starting.json(), { error: true, message: 'Service unavailable', status: 'starting' });
    const other = await fetch(`${base}/admin/v1/projects`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(other.status, 503);
    assert.equal(other.headers.get('retry-after'), '5');
    assert.deepEqual(await other.json(), { error: true, message: 'Service unavailable' });
    assert.equal((await healthcheck(t, port)).code, 1);
    assert.equal((await healthcheck(t, port, ['--live'])).code, 0);

    await migrating.query('select pg_advisory_unlock(3853314791062309107)');
    await migrating.query('commit');
    await waitFor(`${base}/readyz`, 200);
    assert.equal((await fetch(`${base}/admin/v1/projects`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 200);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.output());
  });
});
