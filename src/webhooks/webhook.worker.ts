import type { Db } from '../db/database.ts';
import type { DomainEvents } from '../events/index.ts';
import {
  type AttemptResult,
  DeliveryLoop,
  type DeliveryOutcome,
  type DeliveryQueue,
  type OutboxSettings,
  outboxLoopOptions,
  type WebhookSender,
} from '../delivery/index.ts';
import type { WebhookDelivery } from './webhook.ts';
import type { WebhookStore } from './webhook.store.ts';

/** The outbox's settings (no setting of its own, ADR 0040). */
export interface WebhookWorkerDeps extends OutboxSettings {
  db: Db;
  store: WebhookStore;
  /** The outbox's sender: the address guard, the timeout and the Standard Webhooks signature. */
  sender: Pick<WebhookSender, 'send'>;
  events: DomainEvents;
}

/** Deliveries claimed at once: at most one per webhook (the claim's ordering rule), sent in parallel. */
const BATCH = 10;

/**
 * Delivers project webhooks' flag-change events (issue 23) with the outbox's delivery loop and settings:
 * polls every `pollMs` and at once after a commit that queued something; every attempt is recorded;
 * failures are retried with exponential backoff until `maxAttempts`, then given up. A webhook's events
 * go out one at a time in order: the store claims only each webhook's oldest pending delivery, and a
 * batch's outcomes are recorded before the next claim.
 */
export class WebhookWorker extends DeliveryLoop<WebhookDelivery> {
  constructor(deps: WebhookWorkerDeps) {
    super({ name: 'webhook delivery', queue: new WebhookQueue(deps), batch: BATCH, ...outboxLoopOptions(deps) });
    // The events whose transactions may have queued deliveries (audit entries of flag and change request
    // writes). Every process wakes after its own commits (a claim is leased to one process, and only a
    // webhook's oldest pending delivery is claimable, so two processes never send one webhook's events
    // out of order); only one runs the poll loop.
    const wake = () => this.wake();
    deps.events.onCommit('flag.changed', wake);
    deps.events.onCommit('flag.deleted', wake);
    deps.events.onCommit('change_request.changed', wake);
    deps.events.onCommit('webhook.queued', wake);
  }
}

/** Project webhooks' deliveries as a delivery queue. */
class WebhookQueue implements DeliveryQueue<WebhookDelivery> {
  constructor(private readonly deps: WebhookWorkerDeps) {}

  claimDue(now: string, leaseUntil: string, limit: number): Promise<WebhookDelivery[]> {
    return this.deps.store.claimDue(this.deps.db, now, leaseUntil, limit);
  }

  async attempt(delivery: WebhookDelivery): Promise<AttemptResult> {
    // Signed with the webhook's secret as it is when sent; a deleted webhook took its deliveries with it.
    const target = await this.deps.store.targetOf(this.deps.db, delivery.webhookId);
    if (!target) return { ok: false, error: 'the webhook was deleted', final: true };
    return await this.deps.sender.send({ id: delivery.id, url: target.url, body: delivery.payload, secret: target.secret });
  }

  async recordOutcome(delivery: WebhookDelivery, outcome: DeliveryOutcome): Promise<void> {
    await this.deps.db.transaction().execute((trx) => this.deps.store.recordAttempt(trx, delivery, outcome));
  }

  describe(delivery: WebhookDelivery): object {
    return { webhookDelivery: delivery.id };
  }

  pendingStats(): Promise<{ pending: number; oldestCreatedAt: string | null }> {
    return this.deps.store.pendingStats(this.deps.db);
  }
}
