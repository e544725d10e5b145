import type { ChangeScheduler } from '../changes/index.ts';
import type { Config } from '../config.ts';
import type { Scheduler } from '../delivery/index.ts';
import type { FlagChanges } from '../evaluation/index.ts';
import { EXPOSURE_FLUSH_MS, type ExposureRecorder, RUNNING_EXPERIMENTS_REFRESH_MS } from '../experiments/index.ts';
import type { ReleaseGuard } from '../releases/index.ts';
import type { OutboxWorker, RetentionJob } from '../submissions/index.ts';
import { type FlagUsage, nextFlushDelay } from '../usage/index.ts';
import type { WebhookWorker } from '../webhooks/index.ts';

/** The first retention round waits at most this long after start (then every FLAGPOST_RETENTION_INTERVAL_MS). */
const FIRST_RETENTION_ROUND_MS = 10_000;

/**
 * Every periodic job of the process, in one place, with where it runs (docs/architecture.md, "Background
 * work"). Periodic jobs that must not run in every worker run in one process of the instance: the only
 * one, or the worker of slot 1; every worker still delivers what its own submissions wake (a claimed
 * delivery is leased to one process). A job that must not run twice at once across instances on
 * PostgreSQL holds its named lock for each run ('one process of all instances').
 */
export function scheduleJobs(
  scheduler: Scheduler,
  config: Pick<Config, 'retentionIntervalMs' | 'usage'>,
  jobs: {
    changes: FlagChanges;
    changeScheduler: ChangeScheduler;
    outbox: OutboxWorker;
    webhookWorker: WebhookWorker;
    retention: RetentionJob;
    usage: FlagUsage;
    releaseGuard: ReleaseGuard;
    exposures: ExposureRecorder;
  },
): void {
  // The read path's safety net: each process finds the flag changes its feed missed (started after the feed).
  scheduler.every('flag change re-check', { run: () => jobs.changes.recheck(), everyMs: jobs.changes.recheckEveryMs }, 'every process');
  // Every instance looks for due changes; the claim in ChangeApplier.runDue makes each apply once.
  scheduler.add('scheduled changes', jobs.changeScheduler, 'every process');
  scheduler.add('outbox deliveries', jobs.outbox, 'one process');
  scheduler.add('project webhook deliveries', jobs.webhookWorker, 'one process');
  // One instance deletes and prunes at a time: the others skip a round while its lock is held.
  scheduler.every(
    'retention',
    {
      run: (signal) => jobs.retention.runOnce(signal),
      everyMs: config.retentionIntervalMs,
      firstRunMs: Math.min(config.retentionIntervalMs, FIRST_RETENTION_ROUND_MS),
    },
    'one process of all instances',
  );
  // Releases' moves are conditional on each release's version: instances running it at once move each once.
  scheduler.add('release guard', jobs.releaseGuard, 'one process');
  // Each process flushes the counts of the reads it answered: every FLAGPOST_USAGE_FLUSH_MS, cut short at
  // the hour's edges, and once more at shutdown so that counts survive a restart.
  const flushMs = config.usage.flushMs;
  scheduler.every(
    'flag usage flush',
    { run: () => jobs.usage.flush(), everyMs: flushMs, nextRunMs: () => nextFlushDelay(new Date(), flushMs), finally: () => jobs.usage.flush() },
    'every process',
  );
  // Each process knows which flags running experiments measure (started or stopped elsewhere too), and
  // writes the server-side exposures of the evaluations it answered, once more at shutdown.
  scheduler.every('running experiments', { run: () => jobs.exposures.refresh(), everyMs: RUNNING_EXPERIMENTS_REFRESH_MS, firstRunMs: 0 }, 'every process');
  scheduler.every(
    'server-side exposures',
    { run: () => jobs.exposures.flush(), everyMs: EXPOSURE_FLUSH_MS, finally: () => jobs.exposures.flush() },
    'every process',
  );
}
