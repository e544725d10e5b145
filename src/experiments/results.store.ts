import { CompiledQuery } from 'kysely';
import type { Dialect, Executor } from '../db/database.ts';

/** Per-variant sums of per-user values: what the statistics need (the per-user values never leave SQL). */
export interface VariantSums {
  users: number;
  /** Users with at least one numerator event (proportion: the converted users). */
  converted: number;
  sum: number;
  sumSquares: number;
  denominatorSum: number;
  denominatorSumSquares: number;
  sumOfProducts: number;
}

/** One metric as the aggregation reads it. */
export interface MetricSums {
  event: string;
  /** The ratio's denominator event; null for proportion and mean. */
  denominatorEvent: string | null;
  windowMs: number;
}

/** What one results read aggregates: every metric of an experiment, in one pass over its users' events. */
export interface ResultsQuery {
  experimentId: string;
  environmentId: string;
  metrics: MetricSums[];
  /** Events at or after this (the stop) do not count; null while running. */
  endMs: number | null;
}

/** Users per chunk of a SQLite aggregation: a chunk is one short statement, and flag reads run between two. */
const USERS_PER_CHUNK = 10_000;

const emptySums = (): VariantSums => ({ users: 0, converted: 0, sum: 0, sumSquares: 0, denominatorSum: 0, denominatorSumSquares: 0, sumOfProducts: 0 });

/**
 * The aggregation of results in SQL (docs/adr/0044-event-storage.md): per user, their tracked events from
 * their first exposure to the end of the metric's window (one index range of tracked_events per user);
 * then per variant, the sums the statistics need. On SQLite, whose driver runs a statement on the
 * event loop's thread, the users are taken in chunks of USERS_PER_CHUNK with a turn of the event loop
 * between two, so that a results read never holds flag reads (or anything else) for longer than one
 * chunk; PostgreSQL runs it as one statement in its own process.
 */
export class ResultsStore {
  /** `usersPerChunk`: SQLite's chunk size (tests make it small to cross chunk boundaries). */
  constructor(
    private readonly dialect: Dialect,
    private readonly usersPerChunk = USERS_PER_CHUNK,
  ) {}

  private p(n: number): string {
    return this.dialect === 'postgres' ? `$${n}` : '?';
  }

  /** Users per variant, and how many of them were exposed to another variant too. */
  async users(db: Executor, experimentId: string): Promise<{ byVariant: Map<string, number>; multiple: number }> {
    const { rows } = await db.executeQuery<{ variant: string; n: number | string; m: number | string | null }>(
      CompiledQuery.raw(`select variant, count(*) as n, sum(multiple) as m from experiment_users where experiment_id = ${this.p(1)} group by variant`, [
        experimentId,
      ]),
    );
    return {
      byVariant: new Map(rows.map((r) => [r.variant, Number(r.n)])),
      multiple: rows.reduce((total, r) => total + Number(r.m ?? 0), 0),
    };
  }

  /** Per metric (in the query's order), per-variant sums of its per-user values. */
  async sums(db: Executor, query: ResultsQuery): Promise<Array<Map<string, VariantSums>>> {
    const totals = query.metrics.map(() => new Map<string, VariantSums>());
    if (query.metrics.length === 0) return totals;
    const add = (rows: Array<Record<string, number | string>>) => {
      for (const r of rows) {
        const variant = String(r.variant);
        query.metrics.forEach((_, i) => {
          const t = totals[i]!.get(variant) ?? emptySums();
          t.users += Number(r.n);
          t.converted += Number(r[`c${i}`]);
          t.sum += Number(r[`s${i}`]);
          t.sumSquares += Number(r[`ss${i}`]);
          t.denominatorSum += Number(r[`ds${i}`]);
          t.denominatorSumSquares += Number(r[`dss${i}`]);
          t.sumOfProducts += Number(r[`sp${i}`]);
          totals[i]!.set(variant, t);
        });
      }
    };
    if (this.dialect === 'postgres') {
      add(await this.chunk(db, query, undefined, undefined));
      return totals;
    }
    let after: string | undefined;
    for (;;) {
      const upTo = await this.chunkEnd(db, query.experimentId, after);
      add(await this.chunk(db, query, after, upTo));
      if (upTo === undefined) return totals;
      after = upTo;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** The last targeting key of the chunk after `after`, or undefined when the rest fits in one chunk. */
  private async chunkEnd(db: Executor, experimentId: string, after: string | undefined): Promise<string | undefined> {
    const params: unknown[] = [experimentId];
    const from = after === undefined ? '' : ` and targeting_key > ${this.p(params.push(after))}`;
    const { rows } = await db.executeQuery<{ targeting_key: string }>(
      CompiledQuery.raw(
        `select targeting_key from experiment_users where experiment_id = ${this.p(1)}${from} order by targeting_key limit 1 offset ${this.usersPerChunk - 1}`,
        params,
      ),
    );
    return rows[0]?.targeting_key;
  }

  /**
   * One statement: per user (a group of the experiment's users, ordered by the primary key), every
   * metric's numerator and denominator within its window, read from the covering index of
   * tracked_events (no table row is visited); then per variant the sums of those values, their squares
   * and products.
   */
  private async chunk(db: Executor, q: ResultsQuery, after: string | undefined, upTo: string | undefined): Promise<Array<Record<string, number | string>>> {
    // SQLite's `?` takes the next parameter at each use: the text is written in order, a value with each placeholder.
    const params: unknown[] = [];
    let text = '';
    const put = (piece: string, ...values: unknown[]) => {
      text += piece.replace(/\$\?/g, () => {
        params.push(values.shift());
        return this.p(params.length);
      });
    };
    const windowed = (value: string) => `case when e.name = $? and e.occurred_at < u.first_at + $? then ${value} end`;
    put('select variant, count(*) as n');
    q.metrics.forEach((_, i) => {
      put(`, sum(case when c${i} > 0 then 1 else 0 end) as c${i}, sum(a${i}) as s${i}, sum(a${i} * a${i}) as ss${i}`);
      put(`, sum(b${i}) as ds${i}, sum(b${i} * b${i}) as dss${i}, sum(a${i} * b${i}) as sp${i}`);
    });
    put(' from (select u.variant as variant');
    q.metrics.forEach((m, i) => {
      put(`, count(${windowed('1')}) as c${i}`, m.event, m.windowMs);
      put(`, coalesce(sum(${windowed('coalesce(e.value, 1)')}), 0) as a${i}`, m.event, m.windowMs);
      if (m.denominatorEvent === null) put(`, 0 as b${i}`);
      else put(`, coalesce(sum(${windowed('coalesce(e.value, 1)')}), 0) as b${i}`, m.denominatorEvent, m.windowMs);
    });
    const names = [...new Set(q.metrics.flatMap((m) => (m.denominatorEvent === null ? [m.event] : [m.event, m.denominatorEvent])))];
    const longest = Math.max(...q.metrics.map((m) => m.windowMs));
    put(' from experiment_users u left join tracked_events e on e.environment_id = $?', q.environmentId);
    put(` and e.name in (${names.map(() => '$?').join(', ')})`, ...names);
    put(' and e.targeting_key = u.targeting_key and e.occurred_at >= u.first_at and e.occurred_at < u.first_at + $?', longest);
    if (q.endMs !== null) put(' and e.occurred_at < $?', q.endMs);
    put(' where u.experiment_id = $?', q.experimentId);
    if (after !== undefined) put(' and u.targeting_key > $?', after);
    if (upTo !== undefined) put(' and u.targeting_key <= $?', upTo);
    put(' group by u.targeting_key, u.variant) per_user group by variant');
    return (await db.executeQuery<Record<string, number | string>>(CompiledQuery.raw(text, params))).rows;
  }
}
