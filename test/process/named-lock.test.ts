import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, dialects, type TestDatabase } from '../support/context.ts';
import { openDb, type DbHandle } from '../../src/db/connect.ts';
import { lockKeyOf, NamedLocks } from '../../src/db/named-lock.ts';

// Named locks of the jobs that run once across instances (db/named-lock.ts): on PostgreSQL two
// connections, as two instances have, never hold one name at once; on SQLite a lock is always had.

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('lockKeyOf', () => {
  it('gives one name one key on every instance, and other names or schemas other keys', () => {
    assert.equal(lockKeyOf('public', 'job:retention'), lockKeyOf('public', 'job:retention'));
    assert.match(lockKeyOf('public', 'job:retention'), /^-?\d+$/);
    assert.notEqual(lockKeyOf('public', 'job:retention'), lockKeyOf('public', 'job:other'));
    assert.notEqual(lockKeyOf('public', 'job:retention'), lockKeyOf('t_other', 'job:retention'));
  });
});

for (const dialect of dialects()) {
  describe(`named locks [${dialect}]`, () => {
    let database: TestDatabase;
    let first: DbHandle;
    let second: DbHandle;
    const open = () => openDb({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.FLAGPOST_DATA_DIR!, poolSize: 2 });

    before(async () => {
      database = await createTestDatabase(dialect);
      first = open();
      second = dialect === 'postgres' ? open() : first;
    });
    after(async () => {
      await first.close();
      if (second !== first) await second.close();
      await database.drop();
    });

    it('runs the work and answers its value when the lock is free', async () => {
      const run = await new NamedLocks(first.db, dialect).runExclusive('job:free', async () => 42);
      assert.deepEqual(run, { ran: true, value: 42 });
    });

    it('lets only one of two connections hold a name; the other skips at once, and gets it once released', { skip: dialect !== 'postgres' }, async () => {
      const a = new NamedLocks(first.db, dialect);
      const b = new NamedLocks(second.db, dialect);
      const holding = deferred();
      const release = deferred();
      const held = a.runExclusive('job:once', async () => {
        holding.resolve();
        await release.promise;
        return 'a';
      });
      await holding.promise;
      let ranB = false;
      assert.deepEqual(await b.runExclusive('job:once', async () => (ranB = true)), { ran: false });
      assert.equal(ranB, false, "the second connection's work never ran");
      // Another name is free meanwhile.
      assert.deepEqual(await b.runExclusive('job:another', async () => 'b'), { ran: true, value: 'b' });
      release.resolve();
      assert.deepEqual(await held, { ran: true, value: 'a' });
      assert.deepEqual(await b.runExclusive('job:once', async () => 'b'), { ran: true, value: 'b' });
    });

    it('releases the lock when the work fails', { skip: dialect !== 'postgres' }, async () => {
      const a = new NamedLocks(first.db, dialect);
      await assert.rejects(
        a.runExclusive('job:failing', async () => {
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.deepEqual(await new NamedLocks(second.db, dialect).runExclusive('job:failing', async () => 'b'), { ran: true, value: 'b' });
    });
  });
}
