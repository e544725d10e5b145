import { nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { LoopBackoff, type OutageLog } from '../db/outage.ts';
import type { DomainEvents } from '../events/index.ts';
import type { FormService } from '../forms/index.ts';
import type { MailMessage, MailSender } from './mail.sender.ts';
import { type Delivery, type DeliveryAttempt, retryDelayMs, type SendResult } from './outbox.ts';
import type { OutboxStore } from './outbox.store.ts';
import type { WebhookSender } from './webhook.sender.ts';

export interface OutboxWorkerDeps {
  db: Db;
  store: OutboxStore;
  webhooks: WebhookSender;
  /** Undefined when SMTP_URL is not set: e-mail is off. */
  mail: MailSender | undefined;
  /** Webhooks are signed with their form's secret as it is when they are sent (a rotation applies to pending retries). */
  forms: Pick<FormService, 'webhookSecretOf'>;
  /** The worker delivers at once when a submission with deliveries is stored (submission.stored). */
  events: DomainEvents;
  log: WorkerLog;
  pollMs: number;
  retryBaseMs: number;
  maxAttempts: number;
  /** How long a claimed delivery stays reserved for its attempt. */
  leaseMs: number;
  clock?: () => Date;
}

export interface WorkerLog extends OutageLog {
  error(obj: object, msg: string): void;
}

const BATCH = 10;

/**
 * Delivers the outbox (contract D18): polls every `pollMs`, and at once when woken after a submission.
 * Every attempt is recorded; failures are retried with exponential backoff until `maxAttempts`.
 */
export class OutboxWorker {
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private wakePending = false;
  private readonly backoff: LoopBackoff;
  /** The wait before the poll after a failed run. */
  private retryDelayMs = 0;
  /** Attempts of this process by outcome since start (metrics): delivered, retry (tried again later), failed (given up). */
  readonly outcomes = { delivered: 0, retry: 0, failed: 0 };

  constructor(private readonly deps: OutboxWorkerDeps) {
    this.backoff = new LoopBackoff('outbox delivery', deps.log, Math.min(250, Math.max(1, deps.pollMs)), 5000);
    deps.events.onCommit('submission.stored', (event) => {
      if (event.deliveries > 0) this.wake();
    });
  }

  start(): void {
    if (this.deps.pollMs <= 0 || this.timer || this.stopped) return;
    // A failed run (the database is away) never ends the loop: it is logged once and retried with
    // backoff; the poll interval comes back with the first run that works.
    const tick = () => {
      this.runOnce().then(
        () => this.schedule(tick, this.deps.pollMs),
        () => this.schedule(tick, Math.max(this.deps.pollMs, this.retryDelayMs)),
      );
    };
    this.timer = setTimeout(tick, this.deps.pollMs).unref();
  }

  /** Looks for due deliveries soon, without waiting for the next poll; wakes in one turn of the event loop make one run. */
  wake(): void {
    if (this.stopped || this.deps.pollMs <= 0 || this.wakePending) return;
    this.wakePending = true;
    setImmediate(() => {
      this.wakePending = false;
      // A failure is the poll loop's to report and retry.
      this.runOnce().catch(() => {});
    });
  }

  private schedule(tick: () => void, delayMs: number): void {
    if (!this.stopped) this.timer = setTimeout(tick, delayMs).unref();
  }

  /**
   * Delivers everything due now, batch after batch, and resolves with the number of attempts made.
   * Runs are serialised within this instance; other instances coordinate through the claim.
   */
  runOnce(): Promise<number> {
    const run = this.chain.then(() => (this.stopped ? 0 : this.drain()));
    this.chain = run.then(
      () => this.backoff.succeeded(),
      (error: unknown) => {
        // Logged once per outage (LoopBackoff); later failures of the same outage are only counted.
        this.retryDelayMs = this.backoff.failed(error);
      },
    );
    return run;
  }

  /** Stops polling and waits for the attempt in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.chain;
    this.deps.mail?.close();
  }

  private async drain(): Promise<number> {
    let attempts = 0;
    for (;;) {
      const now = this.now();
      const leaseUntil = new Date(now.getTime() + this.deps.leaseMs).toISOString();
      const batch = await this.deps.store.claimDue(this.deps.db, now.toISOString(), leaseUntil, BATCH);
      if (batch.length === 0) return attempts;
      await Promise.all(batch.map((delivery) => this.attempt(delivery)));
      attempts += batch.length;
      if (this.stopped) return attempts;
    }
  }

  private async attempt(delivery: Delivery): Promise<void> {
    const started = this.now();
    const result = await this.send(delivery);
    const attempt: DeliveryAttempt = {
      attempt: delivery.attempts,
      startedAt: started.toISOString(),
      durationMs: Math.max(0, this.now().getTime() - started.getTime()),
      ok: result.ok,
      statusCode: result.statusCode ?? null,
      error: result.ok ? null : (result.error ?? 'failed'),
    };
    const exhausted = delivery.attempts >= this.deps.maxAttempts || result.final === true;
    const status = result.ok ? 'delivered' : exhausted ? 'failed' : 'pending';
    const nextAttemptAt =
      status === 'pending' ? new Date(this.now().getTime() + retryDelayMs(this.deps.retryBaseMs, delivery.attempts)).toISOString() : nowIso(this.deps.clock);
    if (!result.ok)
      this.deps.log.warn({ delivery: delivery.id, kind: delivery.kind, attempt: attempt.attempt, error: attempt.error, status }, 'delivery attempt failed');
    await this.deps.db.transaction().execute((trx) => this.deps.store.recordAttempt(trx, delivery, { attempt, status, nextAttemptAt }));
    this.outcomes[status === 'pending' ? 'retry' : status]++;
  }

  /** Deliveries waiting in the outbox (every instance's) and the age of the oldest in seconds, 0 when none. */
  async queueStats(): Promise<{ pending: number; oldestPendingSeconds: number }> {
    const { pending, oldestCreatedAt } = await this.deps.store.pendingStats(this.deps.db);
    const oldestPendingSeconds = oldestCreatedAt === null ? 0 : Math.max(0, (this.now().getTime() - Date.parse(oldestCreatedAt)) / 1000);
    return { pending, oldestPendingSeconds };
  }

  private async send(delivery: Delivery): Promise<SendResult & { final?: boolean }> {
    try {
      if (delivery.kind === 'webhook') {
        const secret = delivery.formId ? await this.deps.forms.webhookSecretOf(delivery.formId) : null;
        if (!secret) return { ok: false, error: 'the form no longer has a webhook', final: true };
        return await this.deps.webhooks.send({ id: delivery.id, url: delivery.target, body: delivery.payload, secret });
      }
      if (delivery.kind === 'slack' || delivery.kind === 'discord') {
        // Same guard, timeout, retries and history as a webhook; chat services take no signature.
        return await this.deps.webhooks.send({ id: delivery.id, url: delivery.target, body: delivery.payload, secret: null });
      }
      if (!this.deps.mail) return { ok: false, error: 'e-mail is off: SMTP_URL is not set' };
      const { subject, text } = JSON.parse(delivery.payload) as Omit<MailMessage, 'to'>;
      return await this.deps.mail.send({ to: delivery.target, subject, text });
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message.slice(0, 500) : 'failed' };
    }
  }

  private now(): Date {
    return this.deps.clock ? this.deps.clock() : new Date();
  }
}
