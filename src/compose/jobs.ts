import type { ChangeScheduler } from '../changes/index.ts';
import type { Scheduler } from '../delivery/index.ts';
import type { FlagUsage } from '../usage/index.ts';
import type { ReleaseGuard } from '../releases/index.ts';
import type { ExposureRecorder } from '../experiments/index.ts';
import type { OutboxWorker, RetentionJob } from '../submissions/index.ts';
import type { WebhookWorker } from '../webhooks/index.ts';

/**
 * Every periodic job of the process, in one place. Periodic jobs that must not run in every worker run
 * in one process of the instance: the only one, or the worker of slot 1; every worker still delivers what
 * its own submissions wake (a claimed delivery is leased to one process).
 */
export function scheduleJobs(
  scheduler: Scheduler,
  jobs: {
    changeScheduler: ChangeScheduler;
    outbox: OutboxWorker;
    webhookWorker: WebhookWorker;
    retention: RetentionJob;
    usage: FlagUsage;
    releaseGuard: ReleaseGuard;
    exposures: ExposureRecorder;
  },
): void {
  // Every instance looks for due changes; the claim in ChangeApplier.runDue makes each apply once.
  scheduler.add('scheduled changes', jobs.changeScheduler, 'every process');
  scheduler.add('outbox deliveries', jobs.outbox, 'one process');
  scheduler.add('project webhook deliveries', jobs.webhookWorker, 'one process');
  scheduler.add('retention', jobs.retention, 'one process');
  // Releases' moves are conditional on each release's version: instances running it at once move each once.
  scheduler.add('release guard', jobs.releaseGuard, 'one process');
  // Each process flushes the counts of the reads it answered.
  scheduler.add('flag usage flush', jobs.usage, 'every process');
  // Each process writes the server-side exposures of the evaluations it answered.
  scheduler.add('server-side exposures', jobs.exposures, 'every process');
}
