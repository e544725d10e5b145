import type { Db } from '../db/database.ts';
import type { ExposurePort } from '../evaluation/index.ts';
import type { StoredExposure } from './event.store.ts';
import type { EventWriter } from './event-writer.ts';
import type { ExperimentStore } from './experiment.store.ts';
import type { RunningListener } from './experiment.service.ts';

export interface ExposureRecorderDeps {
  db: Db;
  experiments: ExperimentStore;
  writer: EventWriter;
  clock: () => Date;
  log: { warn(obj: object, msg: string): void };
}

/** Ms between two writes of the buffered exposures (they are durable within about this): the scheduler's interval (compose/jobs.ts). */
export const EXPOSURE_FLUSH_MS = 1000;
/** Ms between two reloads of the running experiments (started or stopped by another instance or worker). */
export const RUNNING_EXPERIMENTS_REFRESH_MS = 5000;

/** Exposures kept while the database is away; older ones are dropped past this (a bound on memory). */
const MAX_BUFFERED = 100_000;

/**
 * Server-side exposures (issue 32, docs/adr/0044-event-storage.md): the read path's ExposurePort. Which
 * flags are measured is kept in memory (reloaded after every start and stop here, and every
 * RUNNING_EXPERIMENTS_REFRESH_MS for the other instances' and workers'), so that an evaluation of an unmeasured flag pays
 * one map lookup. An exposure is buffered, the same user, flag and variant once per interval, and the
 * buffer is written every EXPOSURE_FLUSH_MS by the event writer in one group commit: durable within about a
 * second, at a cost per evaluation of a few map operations.
 */
export class ExposureRecorder implements ExposurePort, RunningListener {
  private measured = new Map<string, Map<string, string>>();
  private buffer: StoredExposure[] = [];
  private readonly seen = new Set<string>();
  private flushing: Promise<void> | undefined;

  constructor(private readonly deps: ExposureRecorderDeps) {}

  measuredRule(environmentId: string, flagKey: string): string | undefined {
    return this.measured.get(environmentId)?.get(flagKey);
  }

  record(environmentId: string, flagKey: string, variant: string, targetingKey: string): void {
    const key = `${environmentId}\u0000${flagKey}\u0000${variant}\u0000${targetingKey}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    if (this.buffer.length >= MAX_BUFFERED) this.buffer.shift();
    this.buffer.push({ kind: 'exposure', environmentId, flagKey, variant, targetingKey, occurredAt: this.deps.clock().getTime() });
  }

  runningChanged(): Promise<void> {
    return this.refresh();
  }

  /** Reloads which flags running experiments measure. */
  async refresh(): Promise<void> {
    try {
      const next = new Map<string, Map<string, string>>();
      for (const split of await this.deps.experiments.runningSplits(this.deps.db)) {
        const flags = next.get(split.environmentId) ?? new Map<string, string>();
        flags.set(split.flagKey, split.ruleId);
        next.set(split.environmentId, flags);
      }
      this.measured = next;
    } catch (error) {
      this.deps.log.warn({ err: error }, 'running experiments could not be read; exposures keep the last known ones');
    }
  }

  /** Writes the buffered exposures now (one group commit); resolves once they and every earlier flush are committed. */
  flush(): Promise<void> {
    // Flushes run one after the other: a flush asked while one runs waits for it, then writes what came since.
    const run = (this.flushing ?? Promise.resolve()).then(() => this.writeBuffered());
    this.flushing = run;
    return run;
  }

  private async writeBuffered(): Promise<void> {
    if (this.buffer.length === 0) return;
    const exposures = this.buffer;
    this.buffer = [];
    this.seen.clear();
    try {
      await this.deps.writer.write({ exposures, tracked: [] });
    } catch (error) {
      // Kept for the next flush (the database may be back by then).
      this.buffer = [...exposures, ...this.buffer].slice(-MAX_BUFFERED);
      this.deps.log.warn({ err: error, exposures: exposures.length }, 'server-side exposures could not be written; retrying');
    }
  }
}
