import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

/** Evaluations added to one hourly bucket by one flush. */
export interface UsageIncrement {
  environmentId: string;
  slug: string;
  hour: string;
  evaluations: number;
  at: string;
}

/** Rows per INSERT: 5 parameters each, far below SQLite's and PostgreSQL's parameter limits. */
const BATCH_ROWS = 500;

export class FlagUsageStore {
  /**
   * Adds the increments to their buckets (upsert-add): several instances flushing the same bucket at
   * once all count, because each statement adds to the stored value in the row's own lock. Rows go in
   * key order, so two instances' batches lock rows in the same order and cannot deadlock on PostgreSQL.
   */
  async add(db: Executor, increments: UsageIncrement[]): Promise<void> {
    const sorted = [...increments].sort((a, b) => compare(a.environmentId, b.environmentId) || compare(a.slug, b.slug) || compare(a.hour, b.hour));
    for (let i = 0; i < sorted.length; i += BATCH_ROWS) {
      await db
        .insertInto('flag_usage')
        .values(
          sorted.slice(i, i + BATCH_ROWS).map((row) => ({
            environment_id: row.environmentId,
            flag_slug: row.slug,
            hour: row.hour,
            evaluations: row.evaluations,
            last_evaluated_at: row.at,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['environment_id', 'flag_slug', 'hour']).doUpdateSet({
            evaluations: sql`flag_usage.evaluations + excluded.evaluations`,
            last_evaluated_at: sql`case when excluded.last_evaluated_at > flag_usage.last_evaluated_at then excluded.last_evaluated_at else flag_usage.last_evaluated_at end`,
          }),
        )
        .execute();
    }
  }

  /** The latest evaluation of each flag in each of these environments, as `environmentId\nslug` -> ISO time. */
  async lastEvaluated(db: Executor, environmentIds: string[]): Promise<Map<string, string>> {
    if (environmentIds.length === 0) return new Map();
    const rows = await db
      .selectFrom('flag_usage')
      .select(['environment_id', 'flag_slug', (eb) => eb.fn.max('last_evaluated_at').as('last')])
      .where('environment_id', 'in', environmentIds)
      .groupBy(['environment_id', 'flag_slug'])
      .execute();
    return new Map(rows.map((r) => [`${r.environment_id}\n${r.flag_slug}`, r.last]));
  }

  /** Evaluations of one flag per environment and UTC day (`YYYY-MM-DD`) since `sinceHour`. */
  async dailyOfFlag(
    db: Executor,
    environmentIds: string[],
    slug: string,
    sinceHour: string,
  ): Promise<Array<{ environmentId: string; day: string; evaluations: number }>> {
    if (environmentIds.length === 0) return [];
    const day = sql<string>`substr(hour, 1, 10)`;
    const rows = await db
      .selectFrom('flag_usage')
      .select(['environment_id', day.as('day'), (eb) => eb.fn.sum<number | string>('evaluations').as('evaluations')])
      .where('environment_id', 'in', environmentIds)
      .where('flag_slug', '=', slug)
      .where('hour', '>=', sinceHour)
      .groupBy(['environment_id', day])
      .orderBy(day)
      .execute();
    return rows.map((r) => ({ environmentId: r.environment_id, day: r.day, evaluations: Number(r.evaluations) }));
  }

  /** Evaluations of every flag of these environments since `sinceHour`, per slug and environment. */
  async totals(
    db: Executor,
    environmentIds: string[],
    sinceHour: string,
  ): Promise<Array<{ environmentId: string; slug: string; evaluations: number; last: string }>> {
    if (environmentIds.length === 0) return [];
    const rows = await db
      .selectFrom('flag_usage')
      .select([
        'environment_id',
        'flag_slug',
        (eb) => eb.fn.sum<number | string>('evaluations').as('evaluations'),
        (eb) => eb.fn.max('last_evaluated_at').as('last'),
      ])
      .where('environment_id', 'in', environmentIds)
      .where('hour', '>=', sinceHour)
      .groupBy(['environment_id', 'flag_slug'])
      .execute();
    return rows.map((r) => ({ environmentId: r.environment_id, slug: r.flag_slug, evaluations: Number(r.evaluations), last: r.last }));
  }

  /** Forgets a deleted flag's usage, in the transaction that deletes it. */
  async deleteFlag(db: Executor, environmentIds: string[], slug: string): Promise<void> {
    if (environmentIds.length === 0) return;
    await db.deleteFrom('flag_usage').where('environment_id', 'in', environmentIds).where('flag_slug', '=', slug).execute();
  }

  /** Deletes the buckets before `beforeHour`; returns how many. */
  async prune(db: Executor, beforeHour: string): Promise<number> {
    const result = await db.deleteFrom('flag_usage').where('hour', '<', beforeHour).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** When usage counting began on this database (migration 0017). */
  async countingSince(db: Executor): Promise<string | undefined> {
    const row = await db.selectFrom('settings').select('value').where('key', '=', 'usage_counting_since').executeTakeFirst();
    return row?.value;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
