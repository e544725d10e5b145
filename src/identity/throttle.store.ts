import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { ThrottleCount } from './throttle.ts';

/**
 * Fixed-window counters in the `throttles` table. Every statement is one atomic step on both engines
 * (INSERT ... ON CONFLICT DO UPDATE ... RETURNING), so concurrent attempts on any number of instances
 * each get their own count: exactly `limit` of them see a count within the limit.
 */
export class ThrottleStore {
  /** Counts one attempt; a window that has ended starts again at 1 with a new end. */
  async hit(db: Executor, key: string, now: string, windowEndsAt: string): Promise<ThrottleCount> {
    const row = await db
      .insertInto('throttles')
      .values({ key, hits: 1, window_ends_at: windowEndsAt })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          hits: sql<number>`case when throttles.window_ends_at <= ${now} then 1 else throttles.hits + 1 end`,
          window_ends_at: sql<string>`case when throttles.window_ends_at <= ${now} then excluded.window_ends_at else throttles.window_ends_at end`,
        }),
      )
      .returning(['hits', 'window_ends_at'])
      .executeTakeFirstOrThrow();
    return { hits: Number(row.hits), windowEndsAt: row.window_ends_at };
  }

  /** Gives back one attempt of the window that ends at `windowEndsAt` (a later window is left alone). */
  async refund(db: Executor, key: string, windowEndsAt: string): Promise<void> {
    await db
      .updateTable('throttles')
      .set({ hits: sql<number>`hits - 1` })
      .where('key', '=', key)
      .where('window_ends_at', '=', windowEndsAt)
      .where('hits', '>', 0)
      .execute();
  }

  /** Forgets a counter; reads first, so that the common case (no counter) writes nothing. */
  async clear(db: Executor, key: string): Promise<void> {
    const found = await db.selectFrom('throttles').select('key').where('key', '=', key).executeTakeFirst();
    if (found) await db.deleteFrom('throttles').where('key', '=', key).execute();
  }

  /** Deletes counters whose window ended before `now`; answers how many. */
  async deleteEnded(db: Executor, now: string): Promise<number> {
    const result = await db.deleteFrom('throttles').where('window_ends_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
