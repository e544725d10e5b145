import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { Metric } from './metric.ts';
import type { MetricStatistic } from './statistics/index.ts';

/** Which users and events make two arms of a flag: the releases' guardrails ask this (issue 33). */
export interface ArmQuery {
  environmentId: string;
  flagKey: string;
  baseline: string;
  variant: string;
  metric: Pick<Metric, 'type' | 'event' | 'denominatorEvent' | 'windowHours'>;
  /** Epoch milliseconds: exposures from then on make users. */
  sinceMs: number;
  /** Epoch milliseconds: nothing after it counts. */
  untilMs: number;
}

interface ArmRow {
  variant: string;
  n: number | string;
  converted: number | string | null;
  num_sum: number | string | null;
  num_sq: number | string | null;
  den_sum: number | string | null;
  den_sq: number | string | null;
  products: number | string | null;
}

/**
 * The per-user sums of a metric in two arms of a flag, in one statement on both engines. A user belongs
 * to the arm of their first exposure to either variant between `sinceMs` and `untilMs` (ties: the
 * variant first in text order); their value is the metric's over their tracked events from that first
 * exposure for `windowHours` (a proportion: 1 with an event; a mean: the events' values summed, 1 for an
 * event without one; a ratio: that sum and the denominator event's), as the experiments' results count.
 * Without any user an arm is an empty statistic.
 */
export async function armStatistics(db: Executor, q: ArmQuery): Promise<{ baseline: MetricStatistic; variant: MetricStatistic }> {
  const windowMs = q.metric.windowHours * 3_600_000;
  const denominator = q.metric.denominatorEvent ?? q.metric.event;
  const { rows } = await sql<ArmRow>`
    with firsts as (
      select targeting_key, min(occurred_at) as first_at from exposures
      where environment_id = ${q.environmentId} and flag_key = ${q.flagKey} and variant in (${q.baseline}, ${q.variant})
        and occurred_at >= ${q.sinceMs} and occurred_at <= ${q.untilMs}
      group by targeting_key
    ),
    users as (
      select f.targeting_key, f.first_at,
        (select min(e.variant) from exposures e
          where e.environment_id = ${q.environmentId} and e.flag_key = ${q.flagKey} and e.targeting_key = f.targeting_key
            and e.occurred_at = f.first_at and e.variant in (${q.baseline}, ${q.variant})) as variant
      from firsts f
    ),
    per_user as (
      select u.variant,
        coalesce(sum(case when t.name = ${q.metric.event} then coalesce(t.value, 1) end), 0) as num,
        count(case when t.name = ${q.metric.event} then 1 end) as hits,
        coalesce(sum(case when t.name = ${denominator} then coalesce(t.value, 1) end), 0) as den
      from users u
      left join tracked_events t on t.environment_id = ${q.environmentId} and t.targeting_key = u.targeting_key
        and t.name in (${q.metric.event}, ${denominator})
        and t.occurred_at >= u.first_at and t.occurred_at < u.first_at + ${windowMs} and t.occurred_at <= ${q.untilMs}
      group by u.targeting_key, u.variant
    )
    select variant, count(*) as n, sum(case when hits > 0 then 1 else 0 end) as converted,
      sum(num) as num_sum, sum(num * num) as num_sq, sum(den) as den_sum, sum(den * den) as den_sq, sum(num * den) as products
    from per_user group by variant`.execute(db);
  const arm = (variant: string): MetricStatistic => {
    const r = rows.find((row) => row.variant === variant);
    const n = Number(r?.n ?? 0);
    const v = (x: number | string | null | undefined) => Number(x ?? 0);
    switch (q.metric.type) {
      case 'proportion':
        return { kind: 'proportion', n, sum: v(r?.converted) };
      case 'mean':
        return { kind: 'mean', n, sum: v(r?.num_sum), sumSquares: v(r?.num_sq) };
      case 'ratio':
        return {
          kind: 'ratio',
          n,
          numeratorSum: v(r?.num_sum),
          numeratorSumSquares: v(r?.num_sq),
          denominatorSum: v(r?.den_sum),
          denominatorSumSquares: v(r?.den_sq),
          sumOfProducts: v(r?.products),
        };
    }
  };
  return { baseline: arm(q.baseline), variant: arm(q.variant) };
}
