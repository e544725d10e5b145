import { isForeignKeyViolation } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import type { DeliveryAttempt } from '../delivery/index.ts';
import type { Delivery, DeliveryInput, DeliveryKind } from './outbox.ts';
import type { OutboxStore } from './outbox.store.ts';

/** What other capabilities do with the outbox: queue deliveries with their own write, and read their history. */
export class OutboxService {
  constructor(
    private readonly db: Db,
    private readonly store: OutboxStore,
  ) {}

  /** Queues deliveries of a submission inside the submission's transaction `trx` (contract D18). */
  async enqueue(trx: Executor, submission: { id: string; formId: string }, items: DeliveryInput[], now: string): Promise<void> {
    await this.store.enqueue(trx, submission, items, now);
  }

  /** A delivery of a form with its attempts, or undefined. */
  async findOfForm(formId: string, id: string): Promise<{ delivery: Delivery; attempts: DeliveryAttempt[] } | undefined> {
    const delivery = await this.store.findOfForm(this.db, formId, id);
    if (!delivery) return undefined;
    return (await this.store.listForSubmission(this.db, delivery.submissionId)).find((d) => d.delivery.id === id);
  }

  /** Queues a delivery again (see OutboxStore.requeue); false when it is pending or not the form's. */
  async resend(formId: string, id: string, now: string): Promise<boolean> {
    return (await this.store.requeue(this.db, formId, now, id)) > 0;
  }

  /** Queues every failed delivery of a form again; returns how many. */
  async resendFailed(formId: string, now: string): Promise<number> {
    return this.store.requeue(this.db, formId, now);
  }

  /** True when a delivery of this kind to `target` was queued for the form since `since`. */
  async queuedSince(formId: string, kind: DeliveryKind, target: string, since: string): Promise<boolean> {
    return this.store.queuedSince(this.db, formId, kind, target, since);
  }

  /** Queues deliveries of a submission in a write of their own (a submission deleted meanwhile: none). */
  async enqueueNow(submission: { id: string; formId: string }, items: DeliveryInput[], now: string): Promise<void> {
    try {
      await this.store.enqueue(this.db, submission, items, now);
    } catch (error) {
      if (!isForeignKeyViolation(error)) throw error;
    }
  }

  /** Every delivery of a submission with its attempts, oldest first. */
  async deliveriesOf(submissionId: string): Promise<Array<{ delivery: Delivery; attempts: DeliveryAttempt[] }>> {
    return this.store.listForSubmission(this.db, submissionId);
  }
}
