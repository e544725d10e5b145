import type { NamedLocks } from '../db/named-lock.ts';
import { LoopBackoff, type OutageLog } from '../db/outage.ts';

// The one scheduler of the process's periodic jobs (docs/architecture.md, "Background work"). Every job is
// added in one place (`scheduleJobs` in src/compose/jobs.ts, as Unleash's scheduler/schedule-services.ts lists its own),
// with where it runs; `compose()` only builds them, and `services.start()` starts them once the app is
// built, so that a command-line tool composes the same services without starting any.
//
// Two kinds of job. A queue's loop (`JobLoop` in delivery-loop.ts: a poll, a wake after a commit, claims
// under a lease) keeps its rhythm and is added with `add`. Every other periodic job is a plain task added
// with `every`: the scheduler keeps its timer (the interval, or the next run's delay the job computes, as
// the usage flush at the hour's edges), runs it serialised, logs an outage once and retries with backoff,
// and, at stop, waits for the run in flight and runs its last step (the usage flush's final write).
// A job that must run once across instances ('one process of all instances') holds a named lock for
// each run (db/named-lock.ts: an advisory lock on PostgreSQL); an instance that finds it held skips the run.

/** A periodic job: started once, stopped at shutdown (a stop waits for the run in flight). */
export interface PeriodicJob {
  start(): void;
  stop(): Promise<void>;
}

/**
 * Where a job runs: in every process (each has work of its own: its counts to flush, its wakes), in one
 * process of the instance (the only one, or the worker of slot 1 of FLAGPOST_WORKERS > 1), or, for work
 * that must not run twice at once on a shared PostgreSQL database, in one process of all instances.
 */
export type JobPlacement = 'every process' | 'one process' | 'one process of all instances';

export interface ScheduledJob {
  readonly name: string;
  readonly job: PeriodicJob;
  readonly placement: JobPlacement;
}

/** A task the scheduler runs on its own timer (`Scheduler.every`). */
export interface TimedTask {
  /** One run; a throw is logged once per outage and retried with backoff. `signal` aborts at stop: a long run ends early. */
  run(signal: AbortSignal): Promise<unknown>;
  /** Milliseconds between runs; 0 or less: never on a timer (tests run it; `finally` still runs at stop). */
  everyMs: number;
  /** Milliseconds from start to the first run; `nextRunMs()` or the interval when omitted. */
  firstRunMs?: number;
  /** The wait before the next run, computed at start and after each run that worked; the interval when omitted. */
  nextRunMs?: () => number;
  /** Run once at stop, after the run in flight, started or not (the usage flush writes what is counted). */
  finally?: () => Promise<unknown>;
}

export interface SchedulerOptions {
  /** This process is the one that runs the jobs placed in one process ('one process', 'one process of all instances'). */
  runsJobs: boolean;
  log: OutageLog;
  /** The named locks of jobs placed in 'one process of all instances'. */
  locks: Pick<NamedLocks, 'runExclusive'>;
}

export class Scheduler {
  private readonly jobs: ScheduledJob[] = [];
  private started = false;

  constructor(private readonly options: SchedulerOptions) {}

  /** Adds a job that keeps its own rhythm (a queue's `JobLoop`). */
  add(name: string, job: PeriodicJob, placement: Exclude<JobPlacement, 'one process of all instances'>): void {
    if (this.started) throw new Error(`the job ${name} was added after the scheduler started`);
    this.jobs.push({ name, job, placement });
  }

  /** Adds a task run on the scheduler's timer; the job it becomes is returned (its `runNow()` runs it as the timer would). */
  every(name: string, task: TimedTask, placement: JobPlacement): TimedJob {
    if (this.started) throw new Error(`the job ${name} was added after the scheduler started`);
    const exclusive = placement === 'one process of all instances';
    const job = new TimedJob(name, task, this.options.log, exclusive ? this.options.locks : undefined);
    this.jobs.push({ name, job, placement });
    return job;
  }

  /** The jobs this process runs, in the order they start. */
  get here(): readonly ScheduledJob[] {
    return this.jobs.filter((j) => j.placement === 'every process' || this.options.runsJobs);
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

/** A task on the scheduler's timer: serialised runs, backoff while failing, the named lock if it has one. */
export class TimedJob implements PeriodicJob {
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private readonly stopping = new AbortController();
  private readonly backoff: LoopBackoff;

  constructor(
    readonly name: string,
    private readonly task: TimedTask,
    log: OutageLog,
    private readonly locks: SchedulerOptions['locks'] | undefined,
  ) {
    this.backoff = new LoopBackoff(name, log, 1000, 60_000);
  }

  start(): void {
    if (this.task.everyMs <= 0 || this.timer || this.stopped) return;
    this.schedule(this.task.firstRunMs ?? this.task.nextRunMs?.() ?? this.task.everyMs);
  }

  /**
   * One run now, after the run in flight: under the job's named lock if it has one. Resolves true when it
   * ran, false when another instance held the lock (or the job is stopped); rejects when the run failed.
   */
  runNow(): Promise<boolean> {
    const run = this.chain.then(async () => {
      if (this.stopped) return false;
      if (!this.locks) {
        await this.task.run(this.stopping.signal);
        return true;
      }
      return (await this.locks.runExclusive(`job:${this.name}`, () => this.task.run(this.stopping.signal))).ran;
    });
    this.chain = run.catch(() => {});
    return run;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.stopping.abort();
    await this.chain;
    await this.task.finally?.();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.runNow().then(
        () => {
          this.backoff.succeeded();
          this.schedule(this.task.nextRunMs?.() ?? this.task.everyMs);
        },
        // A failed run (the database is away) is logged once per outage and retried sooner than the next interval.
        (error: unknown) => this.schedule(Math.min(this.task.everyMs, this.backoff.failed(error))),
      );
    }, delayMs).unref();
  }
}
