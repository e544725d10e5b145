import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import type { Services } from '../../src/compose.ts';
import type { DbHandle } from '../../src/db/connect.ts';
import type { PgFlagChanges } from '../../src/evaluation/pg-flag-changes.ts';
import { ADMIN_TOKEN, createTestDatabase, startInstance, type TestDatabase } from '../support/context.ts';
import { keys, type ProjectFixture } from '../support/fixtures.ts';

interface Instance {
  app: FastifyInstance;
  services: Services;
  handle: DbHandle;
  feed: PgFlagChanges;
  close(): Promise<void>;
}

async function startPgInstance(database: TestDatabase): Promise<Instance> {
  const { app, services, handle } = await startInstance(database);
  return {
    app,
    services,
    handle,
    feed: services.changes as PgFlagChanges,
    async close() {
      await app.close();
      await services.stop();
      await handle.close();
    },
  };
}

const adminCall = (instance: Instance, method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
  instance.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });

/** Polls `read` until `done` holds; returns the milliseconds it took, or fails after `limitMs`. */
async function within(
  limitMs: number,
  read: () => Promise<{ statusCode: number; body: string }>,
  done: (res: { statusCode: number; body: string }) => boolean,
) {
  const started = performance.now();
  for (;;) {
    const res = await read();
    const elapsed = performance.now() - started;
    if (done(res)) return elapsed;
    if (elapsed > limitMs) assert.fail(`not seen within ${limitMs} ms; last answer ${res.statusCode} ${res.body}`);
    await sleep(10);
  }
}

const enabledOf = (res: { statusCode: number; body: string }) => res.statusCode === 200 && JSON.parse(res.body).enabled === true;

describe('several instances on one PostgreSQL (LISTEN/NOTIFY)', { skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let database: TestDatabase;
  let one: Instance;
  let two: Instance;
  let project: ProjectFixture;
  const read = (instance: Instance, slug: string, p = project) => instance.app.inject({ method: 'GET', url: `/v1/flags/${slug}`, headers: keys(p) });
  const patch = (slug: string, body: unknown) =>
    adminCall(one, 'PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/${slug}`, body);

  before(async () => {
    database = await createTestDatabase('postgres');
    one = await startPgInstance(database);
    two = await startPgInstance(database);
    project = (await adminCall(one, 'POST', '/admin/v1/projects', { name: 'Shop' })).json();
    for (const slug of ['checkout', 'search', 'banner']) {
      assert.equal((await adminCall(one, 'POST', `/admin/v1/projects/${project.key}/flags`, { slug })).statusCode, 201);
    }
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await database?.drop();
  });

  it('serves a change made through one instance on the other within one second', async () => {
    const warm = await read(two, 'checkout');
    assert.equal(warm.json().enabled, false);
    assert.equal((await patch('checkout', { enabled: true })).statusCode, 200);
    const ms = await within(1000, () => read(two, 'checkout'), enabledOf);
    assert.ok(ms < 1000, `${ms} ms`);
  });

  it('drops a deleted flag on the other instance within one second', async () => {
    assert.equal((await read(two, 'banner')).statusCode, 200);
    assert.equal((await adminCall(one, 'DELETE', `/admin/v1/projects/${project.key}/flags/banner`)).statusCode, 204);
    await within(
      1000,
      () => read(two, 'banner'),
      (res) => res.statusCode === 404,
    );
  });

  it('knows a project created through the other instance within one second', async () => {
    const created: ProjectFixture = (await adminCall(one, 'POST', '/admin/v1/projects', { name: 'Blog' })).json();
    await adminCall(one, 'POST', `/admin/v1/projects/${created.key}/flags`, { slug: 'comments', enabled: true });
    await within(1000, () => read(two, 'comments', created), enabledOf);
  });

  it('recovers when its listener connection is killed, and catches up on what it missed', async () => {
    const before = two.feed.listenerProcessId;
    assert.ok(before, 'the listener is connected');
    assert.equal((await read(two, 'search')).json().enabled, false);
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query('select pg_terminate_backend($1)', [before]);
    } finally {
      await admin.end();
    }
    // Changed while nobody listens on instance two: the reconnection itself must bring it in.
    assert.equal((await patch('search', { enabled: true })).statusCode, 200);
    await within(3000, () => read(two, 'search'), enabledOf);
    const after = two.feed.listenerProcessId;
    assert.ok(after && after !== before, 'a new listener connection');

    // And the new connection delivers changes as fast as the first one did.
    assert.equal((await patch('search', { enabled: false })).statusCode, 200);
    await within(
      1000,
      () => read(two, 'search'),
      (res) => res.statusCode === 200 && JSON.parse(res.body).enabled === false,
    );
  });

  it('catches a change whose notification never came at the next re-check', async () => {
    await two.feed.recheck();
    assert.equal((await read(two, 'checkout')).json().description, '');
    // A write that announces nothing, as if its NOTIFY had been lost.
    await sql`update flags set description = 'quiet', updated_at = ${new Date().toISOString()} where slug = 'checkout'`.execute(one.handle.db);
    assert.equal((await read(two, 'checkout')).json().description, '', 'still the snapshot');
    await two.feed.recheck();
    assert.equal((await read(two, 'checkout')).json().description, 'quiet');
  });
});
