import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { ADMIN_TOKEN, createTestDatabase, dialects, startInstance, type TestDatabase } from '../support/context.ts';

// Issue 24: a scheduled change is applied once, by exactly one instance, and late when no instance ran
// at its time. Time moves only when a test moves it (the clock port).

type Instance = Awaited<ReturnType<typeof startInstance>>;

function call(instance: Instance, method: InjectOptions['method'], url: string, body?: unknown) {
  return instance.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function ok(res: Promise<{ statusCode: number; body: string }>, status = 200) {
  const r = await res;
  assert.equal(r.statusCode, status, r.body);
  return JSON.parse(r.body);
}

async function stop(instance: Instance) {
  await instance.app.close();
  await instance.services.stop();
  await instance.handle.close();
}

/** A project with `flags` boolean flags and a scheduled change request per flag in development, due at `at`. */
async function scheduleChanges(instance: Instance, flags: number, at: string) {
  const project = await ok(call(instance, 'POST', '/admin/v1/projects', { name: 'Race' }), 201);
  const env = project.environments[0].key;
  const ids: string[] = [];
  for (let i = 0; i < flags; i++) {
    await ok(call(instance, 'POST', `/admin/v1/projects/${project.key}/flags`, { slug: `f${i}` }), 201);
    const cr = await ok(
      call(instance, 'POST', `/admin/v1/projects/${project.key}/change-requests`, {
        environment: env,
        title: `f${i} on`,
        flags: [{ slug: `f${i}`, values: { enabled: true } }],
      }),
      201,
    );
    await ok(call(instance, 'PUT', `/admin/v1/projects/${project.key}/change-requests/${cr.id}/schedule`, { at }));
    ids.push(cr.id);
  }
  return { project, env, ids };
}

for (const dialect of dialects()) {
  describe(`scheduled changes across restarts [${dialect}]`, () => {
    it('applies a change due while no instance ran on the next start, and records it as late', async () => {
      let now = Date.parse('2026-07-01T08:00:00.000Z');
      const clock = () => new Date(now);
      const database: TestDatabase = await createTestDatabase(dialect);
      try {
        const first = await startInstance(database, {}, { clock });
        const at = new Date(now + 60_000).toISOString();
        const { project, ids } = await scheduleChanges(first, 1, at);
        await stop(first);
        // Down for ten minutes past the change's time.
        now += 11 * 60_000;
        const second = await startInstance(database, {}, { clock });
        try {
          // The scheduler's first round runs at start, without being asked.
          let view: { status: string; appliedLate: boolean; appliedAt: string | null } | undefined;
          for (let i = 0; i < 100 && view?.status !== 'applied'; i++) {
            await sleep(50);
            view = await ok(call(second, 'GET', `/admin/v1/projects/${project.key}/change-requests/${ids[0]}`));
          }
          assert.deepEqual(view, { ...view, status: 'applied', appliedLate: true, appliedAt: new Date(now).toISOString() });
          const audit = await ok(call(second, 'GET', `/admin/v1/audit?project=${project.key}&entity=change_request&entityId=${ids[0]}`));
          const applied = audit.entries.find((e: { action: string }) => e.action === 'change_request.applied');
          assert.deepEqual(applied.changes.appliedLate, { after: true });
          assert.deepEqual(applied.changes.scheduledAt, { after: at });
          const flag = await ok(call(second, 'GET', `/admin/v1/projects/${project.key}/flags`));
          assert.equal(flag.flags[0].environments[0].enabled, true);
        } finally {
          await stop(second);
        }
      } finally {
        await database.drop();
      }
    });
  });
}

describe('scheduled changes with two PostgreSQL instances racing', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, () => {
  it('applies each due change exactly once, over many rounds', { timeout: 300_000 }, async () => {
    let now = Date.parse('2026-07-01T08:00:00.000Z');
    const clock = () => new Date(now);
    const database = await createTestDatabase('postgres');
    const a = await startInstance(database, {}, { clock });
    const b = await startInstance(database, {}, { clock });
    // Only the explicit rounds below race: each instance's own periodic round (every few seconds) would be
    // a fifth runner whose share this test cannot count, when a slow machine stretches the test past it.
    await Promise.all([a.services.changeScheduler.stop(), b.services.changeScheduler.stop()]);
    try {
      const ROUNDS = 30;
      const PER_ROUND = 4;
      let total = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const at = new Date(now + 60_000).toISOString();
        const { project, ids } = await scheduleChanges(round % 2 ? a : b, PER_ROUND, at);
        now += 60_000;
        // Both instances' scheduler rounds at the same moment, several times each.
        const applied = await Promise.all([
          a.services.changeApplier.runDue(),
          b.services.changeApplier.runDue(),
          a.services.changeApplier.runDue(),
          b.services.changeApplier.runDue(),
        ]);
        const sum = applied.reduce((x, y) => x + y, 0);
        assert.equal(sum, PER_ROUND, `round ${round}: applied ${applied.join('+')}`);
        total += sum;
        for (const id of ids) {
          const audit = await ok(call(a, 'GET', `/admin/v1/audit?project=${project.key}&entity=change_request&entityId=${id}`));
          assert.equal(audit.entries.filter((e: { action: string }) => e.action === 'change_request.applied').length, 1);
        }
        const flags = await ok(call(b, 'GET', `/admin/v1/projects/${project.key}/flags`));
        // Created at version 1, changed once by its request.
        for (const flag of flags.flags) assert.equal(flag.environments[0].version, 2, `${flag.slug} written once`);
      }
      assert.equal(total, ROUNDS * PER_ROUND);
    } finally {
      await stop(a);
      await stop(b);
      await database.drop();
    }
  });
});
