import type { Db } from '../db/database.ts';
import type { EventStore, ExperimentUserRow, RunningExperiment, StoredExposure, StoredTrackedEvent } from './event.store.ts';

/** What one caller writes: the events of one batch (or of one flush of server-side exposures). */
export interface EventBatch {
  exposures: StoredExposure[];
  tracked: StoredTrackedEvent[];
}

interface Queued {
  batch: EventBatch;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Most events committed in one transaction: bounds its size and the time the write lock is held. */
const MAX_EVENTS_PER_COMMIT = 20_000;

/**
 * The users that exposures add to running experiments, one row per (experiment, user): the earliest
 * exposure since the start decides the variant; a user seen in two variants is `multiple`. Exposures
 * of variants the experiment's split does not serve are not its users.
 */
export function experimentUsersOf(exposures: readonly StoredExposure[], running: readonly RunningExperiment[]): ExperimentUserRow[] {
  if (running.length === 0) return [];
  // environment -> flag -> its running experiments, each with its users by targeting key (no key strings
  // built per exposure: this runs for every exposure written).
  const byEnvironment = new Map<string, Map<string, Array<{ x: RunningExperiment; users: Map<string, ExperimentUserRow> }>>>();
  for (const x of running) {
    let flags = byEnvironment.get(x.environmentId);
    if (!flags) byEnvironment.set(x.environmentId, (flags = new Map()));
    let list = flags.get(x.flagKey);
    if (!list) flags.set(x.flagKey, (list = []));
    list.push({ x, users: new Map() });
  }
  const rows: ExperimentUserRow[] = [];
  for (const e of exposures) {
    const list = byEnvironment.get(e.environmentId)?.get(e.flagKey);
    if (!list) continue;
    for (const { x, users } of list) {
      if (e.occurredAt < x.startedAt || !x.variants.has(e.variant)) continue;
      const user = users.get(e.targetingKey);
      if (!user) {
        const row = { experimentId: x.id, targetingKey: e.targetingKey, variant: e.variant, firstAt: e.occurredAt, multiple: false };
        users.set(e.targetingKey, row);
        rows.push(row);
        continue;
      }
      if (user.variant !== e.variant) user.multiple = true;
      if (e.occurredAt < user.firstAt) {
        user.variant = e.variant;
        user.firstAt = e.occurredAt;
      }
    }
  }
  return rows;
}

export interface EventWriterOptions {
  /**
   * SQLite: DbHandle.writeFlushedOffLoop, a commit whose disk flush does not hold the event loop; none
   * (PostgreSQL, whose commits never do): a plain transaction.
   */
  writeFlushedOffLoop?: (work: (db: Db) => Promise<void>) => Promise<void>;
  /** Ms at least between the starts of two commits, unless `groupEvents` are waiting (default 50). */
  groupMs?: number;
  /** Events waiting that start a commit before `groupMs` is over (default 1,000). */
  groupEvents?: number;
}

/**
 * Group commit of events. A batch is answered once it is committed (202 only when durable: a kill -9
 * after it loses nothing), and a commit costs a disk flush; so the batches that arrive while one commit
 * runs are written together in the next transaction, with the rollup of experiment users, one flush
 * for all of them. Events are checked before they are queued: a failed commit (the database is away)
 * fails every batch of it, and none is partly written.
 *
 * Under a steady stream of small batches (a client sending 100 events every 10 ms) commits would follow
 * each other as fast as the disk flushes, each writing few events; most of a commit's cost is the
 * commit itself (the pages it touches are written whole to the -wal file, the running experiments are
 * read), so a commit starts at most every `groupMs` unless `groupEvents` are already waiting: the first
 * batch after a quiet spell is written at once, a stream is written in fewer, larger transactions, and
 * a client that fills commits (many connections at once) does not wait for the clock.
 */
export class EventWriter {
  private readonly queue: Queued[] = [];
  private queuedEvents = 0;
  private running = false;
  private commits = 0;
  private lastStart = -Infinity;
  private wake: (() => void) | undefined;
  private readonly groupMs: number;
  private readonly groupEvents: number;

  constructor(
    private readonly db: Db,
    private readonly store: EventStore,
    private readonly options: EventWriterOptions = {},
  ) {
    this.groupMs = options.groupMs ?? 50;
    this.groupEvents = options.groupEvents ?? 1000;
  }

  /** Transactions committed so far (fewer than the batches written when they were grouped). */
  get commitCount(): number {
    return this.commits;
  }

  /** Resolves once the batch is committed. */
  write(batch: EventBatch): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ batch, resolve, reject });
      this.queuedEvents += eventsIn(batch);
      if (this.wake && this.queuedEvents >= this.groupEvents) this.wake();
      if (!this.running) {
        this.running = true;
        // The rest of this turn of the event loop may bring more batches into the same commit.
        setImmediate(() => void this.drain());
      }
    });
  }

  /** Resolves when the next commit may start: `groupMs` after the last one started, or once `groupEvents` wait. */
  private gathered(): Promise<void> | undefined {
    const wait = this.lastStart + this.groupMs - performance.now();
    if (wait <= 0 || this.queuedEvents >= this.groupEvents) return undefined;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.wake?.(), wait);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const gathering = this.gathered();
      if (gathering) await gathering;
      this.lastStart = performance.now();
      const group: Queued[] = [];
      let size = 0;
      while (this.queue.length > 0 && (group.length === 0 || size + eventsIn(this.queue[0]!.batch) <= MAX_EVENTS_PER_COMMIT)) {
        const next = this.queue.shift()!;
        size += eventsIn(next.batch);
        group.push(next);
      }
      this.queuedEvents -= size;
      try {
        await this.commit(group.map((q) => q.batch));
        this.commits++;
        for (const q of group) q.resolve();
      } catch (error) {
        for (const q of group) q.reject(error);
      }
    }
    this.running = false;
  }

  private async commit(batches: EventBatch[]): Promise<void> {
    const exposures = batches.flatMap((b) => b.exposures);
    const tracked = batches.flatMap((b) => b.tracked);
    const write = (db: Db) =>
      db.transaction().execute(async (trx) => {
        if (exposures.length > 0) {
          await this.store.insertExposures(trx, exposures);
          const environments = [...new Set(exposures.map((e) => e.environmentId))];
          const users = experimentUsersOf(exposures, await this.store.runningExperiments(trx, environments));
          if (users.length > 0) await this.store.upsertExperimentUsers(trx, users);
        }
        if (tracked.length > 0) await this.store.insertTracked(trx, tracked);
      });
    // On SQLite the commit's disk flush runs on the thread pool, and this resolves once it is done: the
    // batches of a group are answered when durable, and batches that arrive meanwhile form the next group.
    await (this.options.writeFlushedOffLoop ? this.options.writeFlushedOffLoop(write) : write(this.db));
  }
}

const eventsIn = (batch: EventBatch): number => batch.exposures.length + batch.tracked.length;
