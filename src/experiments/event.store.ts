import { CompiledQuery } from 'kysely';
import type { Dialect, Executor } from '../db/database.ts';
import type { EventAttributes, Exposure, TrackedEvent } from './event.ts';

/** An exposure of an environment, ready to write. */
export type StoredExposure = Exposure & { environmentId: string };
/** A tracked event of an environment, ready to write. */
export type StoredTrackedEvent = TrackedEvent & { environmentId: string };

/** One user of an experiment as exposures make them: the variant of the earliest exposure, and whether they saw another. */
export interface ExperimentUserRow {
  experimentId: string;
  targetingKey: string;
  variant: string;
  firstAt: number;
  multiple: boolean;
}

/** A running experiment as the writer needs it: which exposures make its users. */
export interface RunningExperiment {
  id: string;
  environmentId: string;
  flagKey: string;
  variants: ReadonlySet<string>;
  /** Epoch milliseconds. */
  startedAt: number;
}

/** Rows per INSERT statement: far under both engines' parameter limits (SQLite 32,766, PostgreSQL 65,535). */
const ROWS_PER_STATEMENT = 512;

/** The events of one person, as the personal-data export shows them. */
export interface PersonEvents {
  exposures: Array<{ environmentId: string; flagKey: string; variant: string; timestamp: string }>;
  tracked: Array<{ environmentId: string; name: string; value: number | null; attributes: EventAttributes | null; timestamp: string }>;
}

/**
 * Raw events and the experiment-users rollup. Inserts are written as SQL text with placeholders, not
 * built with Kysely's builder: a group commit writes thousands of rows, and building the query tree
 * of each would cost more than the database's work (docs/adr/0044-event-storage.md).
 */
export class EventStore {
  constructor(private readonly dialect: Dialect) {}

  /** `(?,?,?),(?,?,?)` for `rows` rows of `columns` (`$1` on PostgreSQL), kept: a few sizes are written over and over. */
  private readonly valuesText = new Map<string, string>();

  private placeholders(rows: number, columns: number): string {
    const key = `${rows}x${columns}`;
    let text = this.valuesText.get(key);
    if (text === undefined) {
      const groups: string[] = [];
      let n = 0;
      for (let r = 0; r < rows; r++) {
        const cells: string[] = [];
        for (let c = 0; c < columns; c++) cells.push(this.dialect === 'postgres' ? `$${++n}` : '?');
        groups.push(`(${cells.join(',')})`);
      }
      text = groups.join(',');
      this.valuesText.set(key, text);
    }
    return text;
  }

  /**
   * Inserts `count` rows whose values `cells(i, out)` pushes, `columns` a row. Statements have one of a
   * few sizes (512 rows, then the powers of two that make up the rest: one statement per bit), so that their text, and on SQLite the
   * prepared statement (db/connect.ts keeps them), is reused from one commit to the next.
   */
  private async insertRows(db: Executor, head: string, columns: number, count: number, cells: (i: number, out: unknown[]) => void, tail = ''): Promise<void> {
    let start = 0;
    while (start < count) {
      let size = ROWS_PER_STATEMENT;
      while (size > count - start) size >>= 1;
      const parameters: unknown[] = [];
      for (let i = start; i < start + size; i++) cells(i, parameters);
      await db.executeQuery(CompiledQuery.raw(`${head} values ${this.placeholders(size, columns)}${tail}`, parameters));
      start += size;
    }
  }

  async insertExposures(db: Executor, exposures: readonly StoredExposure[]): Promise<void> {
    await this.insertRows(db, 'insert into exposures (environment_id, flag_key, variant, targeting_key, occurred_at)', 5, exposures.length, (i, out) => {
      const e = exposures[i]!;
      out.push(e.environmentId, e.flagKey, e.variant, e.targetingKey, e.occurredAt);
    });
  }

  async insertTracked(db: Executor, events: readonly StoredTrackedEvent[]): Promise<void> {
    const head = 'insert into tracked_events (environment_id, name, targeting_key, value, attributes, occurred_at)';
    await this.insertRows(db, head, 6, events.length, (i, out) => {
      const e = events[i]!;
      out.push(e.environmentId, e.name, e.targetingKey, e.value, e.attributes ? JSON.stringify(e.attributes) : null, e.occurredAt);
    });
  }

  /** The running experiments of these environments (read in the writing transaction, so a start or stop is seen at once). */
  async runningExperiments(db: Executor, environmentIds: readonly string[]): Promise<RunningExperiment[]> {
    if (environmentIds.length === 0) return [];
    const rows = await db
      .selectFrom('experiments')
      .select(['id', 'environment_id', 'flag_key', 'split', 'started_at'])
      .where('environment_id', 'in', environmentIds)
      .where('status', '=', 'running')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      environmentId: r.environment_id,
      flagKey: r.flag_key,
      variants: new Set((JSON.parse(r.split ?? '{"weights":[]}') as { weights: Array<{ variant: string }> }).weights.map((w) => w.variant)),
      startedAt: Date.parse(r.started_at ?? ''),
    }));
  }

  /**
   * Adds users to experiments, or updates them: the earliest exposure decides the variant, and a user
   * seen in two variants is marked `multiple`. Rows must be unique per (experiment, user).
   */
  async upsertExperimentUsers(db: Executor, users: readonly ExperimentUserRow[]): Promise<void> {
    const tail =
      ' on conflict (experiment_id, targeting_key) do update set' +
      ' multiple = case when experiment_users.multiple = 1 or excluded.multiple = 1 or experiment_users.variant <> excluded.variant then 1 else 0 end,' +
      ' variant = case when excluded.first_at < experiment_users.first_at then excluded.variant else experiment_users.variant end,' +
      ' first_at = case when excluded.first_at < experiment_users.first_at then excluded.first_at else experiment_users.first_at end';
    const head = 'insert into experiment_users (experiment_id, targeting_key, variant, first_at, multiple)';
    await this.insertRows(
      db,
      head,
      5,
      users.length,
      (i, out) => {
        const u = users[i]!;
        out.push(u.experimentId, u.targetingKey, u.variant, u.firstAt, u.multiple ? 1 : 0);
      },
      tail,
    );
  }

  /** The stored exposures of a flag from `sinceMs` on, earliest first (an experiment's start picks up what is already there). */
  async exposuresSince(db: Executor, environmentId: string, flagKey: string, sinceMs: number): Promise<StoredExposure[]> {
    const rows = await db
      .selectFrom('exposures')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('flag_key', '=', flagKey)
      .where('occurred_at', '>=', sinceMs)
      .orderBy('occurred_at')
      .execute();
    return rows.map((r) => ({
      kind: 'exposure',
      environmentId: r.environment_id,
      flagKey: r.flag_key,
      variant: r.variant,
      targetingKey: r.targeting_key,
      occurredAt: Number(r.occurred_at),
    }));
  }

  /** Deletes events older than `beforeMs`, and rollup users first exposed before it; the number of rows deleted. */
  async prune(db: Executor, beforeMs: number): Promise<number> {
    const a = await db.deleteFrom('exposures').where('occurred_at', '<', beforeMs).executeTakeFirst();
    const b = await db.deleteFrom('tracked_events').where('occurred_at', '<', beforeMs).executeTakeFirst();
    const c = await db.deleteFrom('experiment_users').where('first_at', '<', beforeMs).executeTakeFirst();
    return Number(a.numDeletedRows) + Number(b.numDeletedRows) + Number(c.numDeletedRows);
  }

  /** Every event whose targeting key is one of `keys` (the personal-data export). */
  async findPerson(db: Executor, keys: readonly string[]): Promise<PersonEvents> {
    if (keys.length === 0) return { exposures: [], tracked: [] };
    const exposures = await db
      .selectFrom('exposures')
      .select(['environment_id', 'flag_key', 'variant', 'occurred_at'])
      .where('targeting_key', 'in', keys)
      .orderBy('occurred_at')
      .execute();
    const tracked = await db
      .selectFrom('tracked_events')
      .select(['environment_id', 'name', 'value', 'attributes', 'occurred_at'])
      .where('targeting_key', 'in', keys)
      .orderBy('occurred_at')
      .execute();
    const iso = (ms: number | string) => new Date(Number(ms)).toISOString();
    return {
      exposures: exposures.map((r) => ({ environmentId: r.environment_id, flagKey: r.flag_key, variant: r.variant, timestamp: iso(r.occurred_at) })),
      tracked: tracked.map((r) => ({
        environmentId: r.environment_id,
        name: r.name,
        value: r.value === null ? null : Number(r.value),
        attributes: r.attributes === null ? null : (JSON.parse(r.attributes) as EventAttributes),
        timestamp: iso(r.occurred_at),
      })),
    };
  }

  /** Deletes every event and rollup row of these targeting keys; the number of rows deleted. */
  async erasePerson(db: Executor, keys: readonly string[]): Promise<number> {
    if (keys.length === 0) return 0;
    const a = await db.deleteFrom('exposures').where('targeting_key', 'in', keys).executeTakeFirst();
    const b = await db.deleteFrom('tracked_events').where('targeting_key', 'in', keys).executeTakeFirst();
    const c = await db.deleteFrom('experiment_users').where('targeting_key', 'in', keys).executeTakeFirst();
    return Number(a.numDeletedRows) + Number(b.numDeletedRows) + Number(c.numDeletedRows);
  }
}
