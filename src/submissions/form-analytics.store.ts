import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

/** Counts of one UTC day (`YYYY-MM-DD`). */
export interface DayCounts {
  submissions: number;
  spam: number;
  deliveryFailures: number;
  views: number;
}

// Times are ISO-8601 UTC text on both engines (db/codec.ts): their first ten characters are the UTC day.
const dayOf = sql<string>`substr(created_at, 1, 10)`;

/** A form's counts per day: submissions and spam, failed deliveries, views (issue 34). */
export class FormAnalyticsStore {
  /** Counts per day since `sinceDay` (inclusive); days without any are absent. */
  async countsSince(db: Executor, formId: string, sinceDay: string): Promise<Map<string, DayCounts>> {
    const counts = new Map<string, DayCounts>();
    const at = (day: string) => {
      let entry = counts.get(day);
      if (!entry) counts.set(day, (entry = { submissions: 0, spam: 0, deliveryFailures: 0, views: 0 }));
      return entry;
    };
    const since = `${sinceDay}T00:00:00.000Z`;
    const submissions = await db
      .selectFrom('submissions')
      .select((eb) => [dayOf.as('day'), eb.fn.countAll<string | number>().as('total'), eb.fn.sum<string | number | null>('spam').as('spam')])
      .where('form_id', '=', formId)
      .where('created_at', '>=', since)
      .groupBy(dayOf)
      .execute();
    for (const row of submissions) {
      const spam = Number(row.spam ?? 0);
      Object.assign(at(row.day), { submissions: Number(row.total) - spam, spam });
    }
    // A delivery that ended failed counts on the day it was queued (its submission's day, or a re-send's).
    const failures = await db
      .selectFrom('outbox')
      .select((eb) => [dayOf.as('day'), eb.fn.countAll<string | number>().as('failed')])
      .where('form_id', '=', formId)
      .where('status', '=', 'failed')
      .where('created_at', '>=', since)
      .groupBy(dayOf)
      .execute();
    for (const row of failures) at(row.day).deliveryFailures = Number(row.failed);
    const views = await db.selectFrom('form_view_counts').select(['day', 'views']).where('form_id', '=', formId).where('day', '>=', sinceDay).execute();
    for (const row of views) at(row.day).views = Number(row.views);
    return counts;
  }

  /** Counts one view of the form on `day`: one row per form and day, whatever the traffic. */
  async addView(db: Executor, formId: string, day: string): Promise<void> {
    await db
      .insertInto('form_view_counts')
      .values({ form_id: formId, day, views: 1 })
      .onConflict((oc) => oc.columns(['form_id', 'day']).doUpdateSet({ views: sql`form_view_counts.views + 1` }))
      .execute();
  }
}
