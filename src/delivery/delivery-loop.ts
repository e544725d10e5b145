import type { Clock } from '../clock.ts';
import { LoopBackoff, type OutageLog } from '../db/outage.ts';
import { type DeliveryAttempt, type DeliveryStatus, retryDelayMs, type SendResult } from './delivery.ts';

// The one delivery mechanism of the process (docs/architecture.md, "Background loops"): the loop of a
// background job (`JobLoop`: its timer, serialised runs, wake after a commit, backoff while the
// database is away, stop that waits for the run in flight), and on it the loop of a delivery queue
// (`DeliveryLoop`: claim what is due under a lease, attempt each, retry with backoff or give up, record
// every attempt). The submissions' outbox, project webhooks and change-request e-mails are its queues;
// what differs between them (which rows are due, how one is sent, where its outcome is written) is
// their `DeliveryQueue`.

export interface WorkerLog extends OutageLog {
  error(obj: object, msg: string): void;
}

export interface JobLoopOptions {
  /** What the job is called in the log lines of an outage ("<name> failed; retrying ..."). */
  name: string;
  log: OutageLog;
  /** Milliseconds between runs; 0 or less: no timer and no wake (a test, or another loop, calls runOnce). */
  pollMs: number;
  /** Milliseconds from start to the first run; `pollMs` when omitted. */
  firstRunMs?: number;
}

/**
 * The loop of one background job: a run every `pollMs` and, on `wake()`, one soon. Runs of one loop are
 * serialised (a run waits for the one before; other instances coordinate through their claims). A failed
 * run (the database is away) never ends the loop: it is logged once per outage and the next run waits
 * `max(pollMs, backoff)`; the poll interval comes back with the first run that works. `stop()` ends the
 * timer and waits for the run in flight.
 */
export abstract class JobLoop {
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private wakePending = false;
  private readonly backoff: LoopBackoff;
  /** The wait before the run after a failed one. */
  private retryDelayMs = 0;

  constructor(private readonly loop: JobLoopOptions) {
    this.backoff = new LoopBackoff(loop.name, loop.log, Math.min(250, Math.max(1, loop.pollMs)), 5000);
  }

  /** One run of the job; resolves with how much it did. */
  protected abstract runDue(): Promise<number>;

  /** True once `stop()` was called: a long run ends at its next step. */
  protected get stopping(): boolean {
    return this.stopped;
  }

  start(): void {
    if (this.loop.pollMs <= 0 || this.timer || this.stopped) return;
    const tick = () => {
      this.runOnce().then(
        () => this.schedule(tick, this.loop.pollMs),
        () => this.schedule(tick, Math.max(this.loop.pollMs, this.retryDelayMs)),
      );
    };
    this.timer = setTimeout(tick, this.loop.firstRunMs ?? this.loop.pollMs).unref();
  }

  /**
   * Runs soon, without waiting for the next poll. Wakes in one turn of the event loop make one run; a
   * wake while a run is in flight makes one more after it (what woke it may have come too late for it).
   */
  wake(): void {
    if (this.stopped || this.loop.pollMs <= 0 || this.wakePending) return;
    this.wakePending = true;
    setImmediate(() => {
      this.wakePending = false;
      // A failure is the poll loop's to report and retry.
      this.runOnce().catch(() => {});
    });
  }

  /** Runs the job now, after the run in flight if any; resolves with what the run answers. */
  runOnce(): Promise<number> {
    const run = this.chain.then(() => (this.stopped ? 0 : this.runDue()));
    this.chain = run.then(
      () => this.backoff.succeeded(),
      (error: unknown) => {
        // Logged once per outage (LoopBackoff); later failures of the same outage are only counted.
        this.retryDelayMs = this.backoff.failed(error);
      },
    );
    return run;
  }

  /** Stops the timer, refuses further runs and waits for the run in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.chain;
  }

  private schedule(tick: () => void, delayMs: number): void {
    if (!this.stopped) this.timer = setTimeout(tick, delayMs).unref();
  }
}

/** The outcome of one attempt as the sender saw it; `final`: no retry can help (its target is gone). */
export type AttemptResult = SendResult & { final?: boolean };

/** What is written after an attempt: its record, the item's new status and when it is due again. */
export interface DeliveryOutcome {
  attempt: DeliveryAttempt;
  status: DeliveryStatus;
  /** The next attempt's time while pending; the end of the attempt otherwise. */
  nextAttemptAt: string;
}

/** A claimed item: `attempts` counts the attempt it was claimed for. */
export interface Claimed {
  id: string;
  attempts: number;
}

/** What a delivery loop needs of its queue. */
export interface DeliveryQueue<T extends Claimed> {
  /**
   * Claims up to `limit` items due at `now`, each with its attempt counted and reserved until
   * `leaseUntil` (a crashed attempt is due again then); another claim, of any process, never gets them.
   */
  claimDue(now: string, leaseUntil: string, limit: number): Promise<T[]>;
  /** Sends one item; a throw is a failed attempt. */
  attempt(item: T): Promise<AttemptResult>;
  /** Writes an attempt's outcome (its record and the item's new state). */
  recordOutcome(item: T, outcome: DeliveryOutcome): Promise<void>;
  /** The fields of the warning logged when an attempt fails. */
  describe(item: T): object;
  /** How many items wait (leased ones included) and when the oldest was queued; for the metrics. */
  pendingStats(): Promise<{ pending: number; oldestCreatedAt: string | null }>;
}

export interface DeliveryLoopOptions<T extends Claimed> extends JobLoopOptions {
  queue: DeliveryQueue<T>;
  /** Items claimed at once; the items of a claim are attempted in parallel. */
  batch: number;
  /** Attempts of one run at the most; unbounded when omitted (a run drains what is due). */
  maxPerRun?: number;
  /** How long a claimed item stays reserved for its attempt. */
  leaseMs: number;
  /** Attempts before an item is given up. */
  maxAttempts: number;
  /** The wait before the next attempt after `attemptsMade` failed ones. */
  retryDelayMs: (attemptsMade: number) => number;
  clock: Clock;
}

/**
 * The outbox's delivery settings (`FLAGPOST_OUTBOX_POLL_MS`, `FLAGPOST_OUTBOX_RETRY_BASE_MS`,
 * `FLAGPOST_OUTBOX_MAX_ATTEMPTS`; the lease is the webhook timeout plus 60 s), which project webhooks'
 * deliveries use too (ADR 0040).
 */
export interface OutboxSettings {
  log: WorkerLog;
  pollMs: number;
  retryBaseMs: number;
  maxAttempts: number;
  /** How long a claimed delivery stays reserved for its attempt. */
  leaseMs: number;
  clock: Clock;
}

/** A delivery loop's options from the outbox's settings: retries back off exponentially (`retryDelayMs`). */
export function outboxLoopOptions(settings: OutboxSettings): Omit<DeliveryLoopOptions<Claimed>, 'name' | 'queue' | 'batch'> {
  const { log, pollMs, retryBaseMs, maxAttempts, leaseMs, clock } = settings;
  return { log, pollMs, leaseMs, maxAttempts, retryDelayMs: (attemptsMade) => retryDelayMs(retryBaseMs, attemptsMade), clock };
}

/** Attempts by outcome: delivered, retry (failed, tried again later), failed (given up). */
export type DeliveryOutcomes = Record<'delivered' | 'retry' | 'failed', number>;

/**
 * Delivers a queue: each run claims what is due batch after batch until nothing is (or `maxPerRun`),
 * attempts a batch's items in parallel, and records every attempt. A failed attempt is retried after
 * `retryDelayMs` until `maxAttempts`, or given up at once when it is `final`.
 */
export class DeliveryLoop<T extends Claimed> extends JobLoop {
  /** Attempts of this process by outcome since start (metrics). */
  readonly outcomes: DeliveryOutcomes = { delivered: 0, retry: 0, failed: 0 };

  constructor(protected readonly options: DeliveryLoopOptions<T>) {
    super(options);
  }

  /**
   * Delivers what is due now and resolves with the number of attempts made. Not serialised by itself:
   * `runOnce()` is, and a caller whose own loop serialises its rounds may call this in them.
   */
  async deliverDue(): Promise<number> {
    const { queue, batch, leaseMs, maxPerRun = Number.POSITIVE_INFINITY } = this.options;
    let attempts = 0;
    while (attempts < maxPerRun) {
      const now = this.now();
      const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
      const claimed = await queue.claimDue(now.toISOString(), leaseUntil, Math.min(batch, maxPerRun - attempts));
      if (claimed.length === 0) break;
      await Promise.all(claimed.map((item) => this.attempt(item)));
      attempts += claimed.length;
      if (this.stopping) break;
    }
    return attempts;
  }

  /** Items waiting (every instance's: the table is shared) and the age of the oldest in seconds, 0 when none. */
  async queueStats(): Promise<{ pending: number; oldestPendingSeconds: number }> {
    const { pending, oldestCreatedAt } = await this.options.queue.pendingStats();
    const oldestPendingSeconds = oldestCreatedAt === null ? 0 : Math.max(0, (this.now().getTime() - Date.parse(oldestCreatedAt)) / 1000);
    return { pending, oldestPendingSeconds };
  }

  protected runDue(): Promise<number> {
    return this.deliverDue();
  }

  private async attempt(item: T): Promise<void> {
    const { queue, maxAttempts, retryDelayMs, log, name } = this.options;
    const started = this.now();
    let result: AttemptResult;
    try {
      result = await queue.attempt(item);
    } catch (error) {
      result = { ok: false, error: error instanceof Error ? error.message.slice(0, 500) : 'failed' };
    }
    const ended = this.now();
    const attempt: DeliveryAttempt = {
      attempt: item.attempts,
      startedAt: started.toISOString(),
      durationMs: Math.max(0, ended.getTime() - started.getTime()),
      ok: result.ok,
      statusCode: result.statusCode ?? null,
      error: result.ok ? null : (result.error ?? 'failed'),
    };
    const exhausted = item.attempts >= maxAttempts || result.final === true;
    const status: DeliveryStatus = result.ok ? 'delivered' : exhausted ? 'failed' : 'pending';
    const nextAttemptAt = status === 'pending' ? new Date(ended.getTime() + retryDelayMs(item.attempts)).toISOString() : ended.toISOString();
    if (!result.ok) log.warn({ ...queue.describe(item), attempt: attempt.attempt, error: attempt.error, status }, `${name} attempt failed`);
    await queue.recordOutcome(item, { attempt, status, nextAttemptAt });
    this.outcomes[status === 'pending' ? 'retry' : status]++;
  }

  private now(): Date {
    return this.options.clock();
  }
}

/** Several queues' figures as one (the metrics' outbox: every delivery queue of the process). */
export function allDeliveries(loops: Array<Pick<DeliveryLoop<Claimed>, 'outcomes' | 'queueStats'>>): {
  readonly outcomes: DeliveryOutcomes;
  queueStats(): Promise<{ pending: number; oldestPendingSeconds: number }>;
} {
  return {
    get outcomes() {
      const sum: DeliveryOutcomes = { delivered: 0, retry: 0, failed: 0 };
      for (const loop of loops) for (const key of ['delivered', 'retry', 'failed'] as const) sum[key] += loop.outcomes[key];
      return sum;
    },
    async queueStats() {
      const stats = await Promise.all(loops.map((loop) => loop.queueStats()));
      return {
        pending: stats.reduce((n, s) => n + s.pending, 0),
        oldestPendingSeconds: stats.reduce((oldest, s) => Math.max(oldest, s.oldestPendingSeconds), 0),
      };
    },
  };
}
