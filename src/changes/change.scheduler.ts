import { LoopBackoff, type OutageLog } from '../db/outage.ts';
import type { ChangeApplier } from './change-apply.service.ts';
import type { ChangeNotifier } from './change.notifier.ts';

export interface ChangeSchedulerDeps {
  applier: Pick<ChangeApplier, 'runDue'>;
  /** Its e-mails go out in the same rounds. */
  notifier: Pick<ChangeNotifier, 'deliverDue'>;
  log: OutageLog;
  /** How often due changes are looked for; 0 turns the loop off (a test then calls runOnce). */
  pollMs: number;
}

/**
 * The periodic job of scheduled changes (issue 24), built like the outbox worker's loop: a first round
 * at start (changes due while the process was down are applied then, recorded as late), then one every
 * `pollMs`. A failed round (the database is away) is logged once per outage and retried with backoff.
 * Every instance runs it; the claim in ChangeApplier.runDue makes each change apply once.
 */
export class ChangeScheduler {
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private readonly backoff: LoopBackoff;
  private retryDelayMs = 0;

  constructor(private readonly deps: ChangeSchedulerDeps) {
    this.backoff = new LoopBackoff('scheduled changes', deps.log, Math.min(250, Math.max(1, deps.pollMs)), 5000);
  }

  start(): void {
    if (this.deps.pollMs <= 0 || this.timer || this.stopped) return;
    const tick = () => {
      this.runOnce().then(
        () => this.schedule(tick, this.deps.pollMs),
        () => this.schedule(tick, Math.max(this.deps.pollMs, this.retryDelayMs)),
      );
    };
    this.timer = setTimeout(tick, 0).unref();
  }

  /** Applies what is due now; rounds of this instance never overlap. Resolves with the number applied. */
  runOnce(): Promise<number> {
    const run = this.chain.then(async () => {
      if (this.stopped) return 0;
      const applied = await this.deps.applier.runDue();
      await this.deps.notifier.deliverDue();
      return applied;
    });
    this.chain = run.then(
      () => this.backoff.succeeded(),
      (error: unknown) => {
        this.retryDelayMs = this.backoff.failed(error);
      },
    );
    return run;
  }

  /** Stops the loop and waits for the round in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.chain;
  }

  private schedule(tick: () => void, delayMs: number): void {
    if (!this.stopped) this.timer = setTimeout(tick, delayMs).unref();
  }
}
