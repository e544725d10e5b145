import type { Db } from '../db/database.ts';
import { LoopBackoff } from '../db/outage.ts';
import type { DomainEvents } from '../events/index.ts';
import { type DeliveryAttempt, retryDelayMs, type WebhookSender, type WorkerLog } from '../outbox/index.ts';
import type { WebhookDelivery } from './webhook.ts';
import type { WebhookStore } from './webhook.store.ts';

export interface WebhookWorkerDeps {
  db: Db;
  store: WebhookStore;
  /** The outbox's sender: the address guard, the timeout and the Standard Webhooks signature. */
  sender: Pick<WebhookSender, 'send'>;
  events: DomainEvents;
  log: WorkerLog;
  pollMs: number;
  retryBaseMs: number;
  maxAttempts: number;
  /** How long a claimed delivery stays reserved for its attempt. */
  leaseMs: number;
  clock: () => Date;
}

const BATCH = 10;

/**
 * Delivers project webhooks' flag-change events (issue 23), as the outbox worker delivers submissions':
 * polls every `pollMs` and at once after a commit that queued something; every attempt is recorded;
 * failures are retried with exponential backoff until `maxAttempts`, then given up. A webhook's events
 * go out one at a time in order (the store claims only each webhook's oldest pending delivery).
 */
export class WebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private wakePending = false;
  private readonly backoff: LoopBackoff;
  private retryDelayMs = 0;

  constructor(private readonly deps: WebhookWorkerDeps) {
    this.backoff = new LoopBackoff('webhook delivery', deps.log, Math.min(250, Math.max(1, deps.pollMs)), 5000);
    // The events whose transactions may have queued deliveries (audit entries of flag and change request writes).
    const wake = () => this.wake();
    deps.events.onCommit('flag.changed', wake);
    deps.events.onCommit('flag.deleted', wake);
    deps.events.onCommit('change_request.changed', wake);
    deps.events.onCommit('webhook.queued', wake);
  }

  start(): void {
    if (this.deps.pollMs <= 0 || this.timer || this.stopped) return;
    const tick = () => {
      this.runOnce().then(
        () => this.schedule(tick, this.deps.pollMs),
        () => this.schedule(tick, Math.max(this.deps.pollMs, this.retryDelayMs)),
      );
    };
    this.timer = setTimeout(tick, this.deps.pollMs).unref();
  }

  /**
   * Looks for due deliveries soon, without waiting for the next poll. Every process wakes after its own
   * commits (a claim is leased to one process, and only a webhook's oldest pending delivery is claimable,
   * so two processes never send one webhook's events out of order); only one runs the poll loop.
   */
  wake(): void {
    if (this.stopped || this.deps.pollMs <= 0 || this.wakePending) return;
    this.wakePending = true;
    setImmediate(() => {
      this.wakePending = false;
      this.runOnce().catch(() => {});
    });
  }

  private schedule(tick: () => void, delayMs: number): void {
    if (!this.stopped) this.timer = setTimeout(tick, delayMs).unref();
  }

  /** Delivers everything due now and resolves with the number of attempts made; runs are serialised. */
  runOnce(): Promise<number> {
    const run = this.chain.then(() => (this.stopped ? 0 : this.drain()));
    this.chain = run.then(
      () => this.backoff.succeeded(),
      (error: unknown) => {
        this.retryDelayMs = this.backoff.failed(error);
      },
    );
    return run;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.chain;
  }

  private async drain(): Promise<number> {
    let attempts = 0;
    for (;;) {
      const now = this.deps.clock();
      const leaseUntil = new Date(now.getTime() + this.deps.leaseMs).toISOString();
      const batch = await this.deps.store.claimDue(this.deps.db, now.toISOString(), leaseUntil, BATCH);
      if (batch.length === 0) return attempts;
      // One delivery per webhook in a batch: different webhooks are sent in parallel.
      await Promise.all(batch.map((delivery) => this.attempt(delivery)));
      attempts += batch.length;
      if (this.stopped) return attempts;
    }
  }

  private async attempt(delivery: WebhookDelivery): Promise<void> {
    const started = this.deps.clock();
    const result = await this.send(delivery);
    const attempt: DeliveryAttempt = {
      attempt: delivery.attempts,
      startedAt: started.toISOString(),
      durationMs: Math.max(0, this.deps.clock().getTime() - started.getTime()),
      ok: result.ok,
      statusCode: result.statusCode ?? null,
      error: result.ok ? null : (result.error ?? 'failed'),
    };
    const exhausted = delivery.attempts >= this.deps.maxAttempts || result.final === true;
    const status = result.ok ? 'delivered' : exhausted ? 'failed' : 'pending';
    const nextAttemptAt =
      status === 'pending'
        ? new Date(this.deps.clock().getTime() + retryDelayMs(this.deps.retryBaseMs, delivery.attempts)).toISOString()
        : this.deps.clock().toISOString();
    if (!result.ok)
      this.deps.log.warn({ webhookDelivery: delivery.id, attempt: attempt.attempt, error: attempt.error, status }, 'webhook delivery attempt failed');
    await this.deps.db.transaction().execute((trx) => this.deps.store.recordAttempt(trx, delivery, { attempt, status, nextAttemptAt }));
  }

  private async send(delivery: WebhookDelivery): Promise<{ ok: boolean; statusCode?: number; error?: string; final?: boolean }> {
    try {
      // Signed with the webhook's secret as it is when sent; a deleted webhook took its deliveries with it.
      const target = await this.deps.store.targetOf(this.deps.db, delivery.webhookId);
      if (!target) return { ok: false, error: 'the webhook was deleted', final: true };
      return await this.deps.sender.send({ id: delivery.id, url: target.url, body: delivery.payload, secret: target.secret });
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message.slice(0, 500) : 'failed' };
    }
  }
}
