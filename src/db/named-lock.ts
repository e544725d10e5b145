import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Dialect } from './database.ts';

// Named locks of work that must run once across instances (issue 30 item 4; docs/architecture.md,
// "Background work"). On PostgreSQL a name is a session-level advisory lock, taken without waiting
// (`pg_try_advisory_lock`) on a connection reserved for the run and released after it; an instance that
// finds it taken skips the run, and a crashed holder's lock goes with its connection. Advisory locks are
// per database, not per schema: a name is scoped by the schema, so instances of other schemas of the same
// database (as the test suites are) never hold each other's locks. On SQLite one
// process owns the database file, and the scheduler's placement already runs such a job in one process
// of it (the only one, or the worker of slot 1), so a lock is always had.

/** The advisory lock key of a name in a schema: the first 8 bytes of their SHA-256, a signed 64-bit integer as text. */
export function lockKeyOf(schema: string, name: string): string {
  return createHash('sha256').update(`flagpost\n${schema}\n${name}`).digest().readBigInt64BE(0).toString();
}

/** The outcome of `runExclusive`: `ran` false when another instance held the lock. */
export type ExclusiveRun<T> = { ran: true; value: T } | { ran: false };

export class NamedLocks {
  constructor(
    private readonly db: Db,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Runs `work` if no other session holds the lock `name`, holding it until `work` settles; answers
   * `{ ran: false }` at once otherwise. `work` uses the database as usual (other connections of the pool).
   */
  async runExclusive<T>(name: string, work: () => Promise<T>): Promise<ExclusiveRun<T>> {
    // SQLite's one connection must stay free for the work itself; one process owns the file.
    if (this.dialect !== 'postgres') return { ran: true, value: await work() };
    return this.db.connection().execute(async (conn) => {
      const { rows: at } = await sql<{ schema: string }>`select current_schema() as schema`.execute(conn);
      const key = lockKeyOf(at[0]?.schema ?? 'public', name);
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}::bigint) as locked`.execute(conn);
      if (!rows[0]?.locked) return { ran: false };
      try {
        return { ran: true, value: await work() };
      } finally {
        await sql`select pg_advisory_unlock(${key}::bigint)`.execute(conn);
      }
    });
  }
}
