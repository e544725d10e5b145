import type { Db, Executor } from '../db/database.ts';
import type { DeliveryAttempt } from '../delivery/index.ts';
import type { Delivery, DeliveryInput } from './outbox.ts';
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

  /** Every delivery of a submission with its attempts, oldest first. */
  async deliveriesOf(submissionId: string): Promise<Array<{ delivery: Delivery; attempts: DeliveryAttempt[] }>> {
    return this.store.listForSubmission(this.db, submissionId);
  }
}
