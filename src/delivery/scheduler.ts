// The one scheduler of the process's periodic jobs (docs/architecture.md, "Background work"). Every job is
// added in one place (`scheduleJobs` in src/compose/jobs.ts, as Unleash's scheduler/schedule-services.ts lists its own),
// with where it runs; `compose()` only builds them, and `services.start()` starts them once the app is
// built, so that a command-line tool composes the same services without starting any.
//
// A job keeps its own rhythm (a `JobLoop`'s poll and wake, the retention interval, the usage flush at
// the hour's edges); the scheduler decides which jobs run in this process and starts and stops them.
// Where a job must run once across instances, the job itself takes a lock on PostgreSQL (the retention
// job's advisory lock) or claims its rows under a lease (delivery-queue.store.ts).

/** A periodic job: started once, stopped at shutdown (a stop waits for the run in flight). */
export interface PeriodicJob {
  start(): void;
  stop(): Promise<void>;
}

/**
 * Where a job runs: in every process (each has work of its own: its counts to flush, its wakes), or in
 * one process of the instance (the only one, or the worker of slot 1 of FLAGPOST_WORKERS > 1).
 */
export type JobPlacement = 'every process' | 'one process';

export interface ScheduledJob {
  readonly name: string;
  readonly job: PeriodicJob;
  readonly placement: JobPlacement;
}

export class Scheduler {
  private readonly jobs: ScheduledJob[] = [];
  private started = false;

  /** `runsJobs`: this process is the one that runs the jobs placed in 'one process'. */
  constructor(private readonly runsJobs: boolean) {}

  add(name: string, job: PeriodicJob, placement: JobPlacement): void {
    if (this.started) throw new Error(`the job ${name} was added after the scheduler started`);
    this.jobs.push({ name, job, placement });
  }

  /** The jobs this process runs, in the order they start. */
  get here(): readonly ScheduledJob[] {
    return this.jobs.filter((j) => j.placement === 'every process' || this.runsJobs);
  }

  /** Starts the jobs this process runs; a second call does nothing. */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (const { job } of this.here) job.start();
  }

  /** Stops every job (started or not: a stop also refuses later runs), the last added first. */
  async stop(): Promise<void> {
    for (const { job } of [...this.jobs].reverse()) await job.stop();
  }
}
