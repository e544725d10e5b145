import type { Db } from '../db/database.ts';
import type { DomainEvents } from '../events/index.ts';
import type { FormService } from '../forms/index.ts';
import { type AttemptResult, DeliveryLoop, type DeliveryOutcome, type DeliveryQueue, type OutboxSettings, outboxLoopOptions } from '../delivery/index.ts';
import type { MailMessage, MailSender } from '../delivery/index.ts';
import { newId } from '../db/codec.ts';
import type { Delivery, DeliveryInput } from './outbox.ts';
import type { OutboxStore } from './outbox.store.ts';
import type { WebhookSender } from '../delivery/index.ts';

export interface OutboxWorkerDeps extends OutboxSettings {
  db: Db;
  store: OutboxStore;
  webhooks: WebhookSender;
  /** Undefined when SMTP_URL is not set: e-mail is off. */
  mail: MailSender | undefined;
  /** Webhooks are signed with their form's secret as it is when they are sent (a rotation applies to pending retries). */
  forms: Pick<FormService, 'webhookSecretOf'>;
  /** The worker delivers at once when a submission with deliveries is stored (submission.stored). */
  events: DomainEvents;
}

/** Deliveries claimed at once, sent in parallel. */
const BATCH = 10;

/**
 * Delivers the outbox (contract D18) with the shared delivery loop: polls every `pollMs`, and at once
 * when woken after a submission. Every attempt is recorded; failures are retried with exponential
 * backoff until `maxAttempts`. A batch's deliveries are sent in parallel, in no order.
 */
export class OutboxWorker extends DeliveryLoop<Delivery> {
  private readonly queue: OutboxQueue;

  constructor(private readonly deps: OutboxWorkerDeps) {
    const queue = new OutboxQueue(deps);
    super({ name: 'outbox delivery', queue, batch: BATCH, ...outboxLoopOptions(deps) });
    this.queue = queue;
    deps.events.onCommit('submission.stored', (event) => {
      if (event.deliveries > 0) this.wake();
    });
  }

  /**
   * Sends one delivery at once, outside the queue (nothing is stored): the "send a test" action of a form
   * (issue 34). Webhooks are signed with the form's secret as for real deliveries.
   */
  async tryNow(formId: string, item: DeliveryInput): Promise<AttemptResult> {
    const now = (this.deps.clock?.() ?? new Date()).toISOString();
    return this.queue.attempt({
      ...item,
      id: `test_${newId()}`,
      submissionId: '',
      formId,
      status: 'pending',
      attempts: 1,
      nextAttemptAt: now,
      lastError: null,
      createdAt: now,
      deliveredAt: null,
    });
  }

  /** Stops polling, waits for the attempts in progress and closes the SMTP connections. */
  override async stop(): Promise<void> {
    await super.stop();
    this.deps.mail?.close();
  }
}

/** The outbox table as a delivery queue: webhooks (signed with their form's secret), chat messages and e-mails. */
class OutboxQueue implements DeliveryQueue<Delivery> {
  constructor(private readonly deps: OutboxWorkerDeps) {}

  claimDue(now: string, leaseUntil: string, limit: number): Promise<Delivery[]> {
    return this.deps.store.claimDue(this.deps.db, now, leaseUntil, limit);
  }

  async attempt(delivery: Delivery): Promise<AttemptResult> {
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
    const mail = JSON.parse(delivery.payload) as Omit<MailMessage, 'to'>;
    return await this.deps.mail.send({ ...mail, to: delivery.target });
  }

  async recordOutcome(delivery: Delivery, outcome: DeliveryOutcome): Promise<void> {
    await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      await this.deps.store.recordAttempt(trx, delivery, outcome);
      // Given up: announced (issue 34), so that the form's owners hear of it.
      if (outcome.status === 'failed' && delivery.formId) {
        const { id: deliveryId, submissionId, formId, kind, target } = delivery;
        await emit({ type: 'delivery.failed', formId, submissionId, deliveryId, kind, target, error: outcome.attempt.error });
      }
    });
  }

  describe(delivery: Delivery): object {
    return { delivery: delivery.id, kind: delivery.kind };
  }

  pendingStats(): Promise<{ pending: number; oldestCreatedAt: string | null }> {
    return this.deps.store.pendingStats(this.deps.db);
  }
}
