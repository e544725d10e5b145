import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import { EventStore, EventWriter } from '../../src/experiments/index.ts';
import type { StoredExposure } from '../../src/experiments/event.store.ts';
import { forEachDialect } from '../support/context.ts';
import { createProject } from '../support/fixtures.ts';

// The event writer's group commit (issue 32, docs/adr/0044-event-storage.md): a steady stream of small
// batches is written in commits spaced by `groupMs`, a commit starts early once `groupEvents` wait, and
// on SQLite the commit's disk flush runs off the event loop and leaves the connection as it was.

forEachDialect('event writer: group commit', (ctx) => {
  let environmentId: string;
  const exposures = (prefix: string, n: number, occurredAt = Date.now()): StoredExposure[] =>
    Array.from({ length: n }, (_, i) => ({ kind: 'exposure', environmentId, flagKey: 'banner', variant: 'on', targetingKey: `${prefix}-${i}`, occurredAt }));
  const writerOf = (options: { groupMs: number; groupEvents: number }) =>
    new EventWriter(ctx().handle.db, new EventStore(ctx().handle.dialect), { writeFlushedOffLoop: ctx().handle.writeFlushedOffLoop, ...options });
  const stored = async (prefix: string) =>
    (await ctx().handle.db.selectFrom('exposures').select('targeting_key').where('targeting_key', 'like', `${prefix}-%`).execute()).length;

  it('writes a steady stream of small batches in commits at most every groupMs', async () => {
    const project = await createProject(ctx(), 'Writer');
    const env = await ctx()
      .handle.db.selectFrom('environments')
      .innerJoin('projects', 'projects.id', 'environments.project_id')
      .select('environments.id')
      .where('projects.key', '=', project.key)
      .executeTakeFirstOrThrow();
    environmentId = env.id;
    const writer = writerOf({ groupMs: 250, groupEvents: 1000 });
    const writes: Array<Promise<void>> = [];
    const started = Date.now();
    // 20 batches of one event, one every 25 ms: without the spacing, about one commit each.
    for (let i = 0; i < 20; i++) {
      writes.push(writer.write({ exposures: exposures(`stream${i}`, 1), tracked: [] }));
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await Promise.all(writes);
    const elapsed = Date.now() - started;
    // One commit at once, then one per 250 ms at most (and the last one after the loop).
    const most = Math.ceil(elapsed / 250) + 1;
    assert.ok(writer.commitCount <= most, `${writer.commitCount} commits in ${elapsed} ms (at most ${most})`);
    for (let i = 0; i < 20; i++) assert.equal(await stored(`stream${i}`), 1, `batch ${i} is stored`);
  });

  it('starts a commit before groupMs is over once groupEvents wait', async () => {
    const writer = writerOf({ groupMs: 60_000, groupEvents: 50 });
    await writer.write({ exposures: exposures('quiet', 1), tracked: [] });
    assert.equal(writer.commitCount, 1, 'the first batch after a quiet spell is written at once');
    const started = Date.now();
    const small = writer.write({ exposures: exposures('small', 1), tracked: [] });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(writer.commitCount, 1, 'one event waits for the next commit');
    await Promise.all([small, writer.write({ exposures: exposures('large', 60), tracked: [] })]);
    assert.ok(Date.now() - started < 30_000, 'written long before groupMs');
    assert.equal(writer.commitCount, 2, 'the waiting batch and the one that filled the group in one commit');
    assert.equal(await stored('small'), 1);
    assert.equal(await stored('large'), 60);
  });

  it('leaves SQLite at synchronous = FULL after a commit flushed off the event loop', async (t) => {
    if (ctx().dialect !== 'sqlite') {
      assert.equal(ctx().handle.writeFlushedOffLoop, undefined, 'PostgreSQL commits plainly');
      return;
    }
    const writer = writerOf({ groupMs: 0, groupEvents: 1 });
    await writer.write({ exposures: exposures('full', 3), tracked: [] });
    assert.equal(await stored('full'), 3);
    const synchronous = async (db: Db) => (await sql<{ synchronous: number }>`pragma synchronous`.execute(db)).rows[0]!.synchronous;
    let during: number | undefined;
    await ctx().handle.writeFlushedOffLoop!(async (db) => {
      during = await synchronous(db);
    });
    assert.equal(during, 1, 'NORMAL (1) while the event transaction commits: the flush follows on the thread pool');
    assert.equal(await synchronous(ctx().handle.db), 2, 'FULL (2) again for every other transaction');
    t.diagnostic('synchronous was NORMAL inside, FULL after');
  });
});
