import type { Selectable } from 'kysely';
import { newId } from '../db/codec.ts';
import type { Dialect, Executor } from '../db/database.ts';
import type { DeliveryAttempt, DeliveryStatus } from '../delivery/index.ts';
import type { Delivery, DeliveryInput, DeliveryKind } from './outbox.ts';
import type { OutboxTable } from './outbox.table.ts';
import type { DeliveryOutcome } from '../delivery/index.ts';
import { attemptsOf, claimDueRows, newQueueRow, pendingStatsOf, recordAttemptOf } from '../delivery/index.ts';

const toDelivery = (row: Selectable<OutboxTable>): Delivery => ({
  id: row.id,
  submissionId: row.submission_id,
  formId: row.form_id,
  kind: row.kind as DeliveryKind,
  target: row.target,
  payload: row.payload,
  status: row.status as DeliveryStatus,
  attempts: Number(row.attempts),
  nextAttemptAt: row.next_attempt_at,
  lastError: row.last_error,
  createdAt: row.created_at,
  deliveredAt: row.delivered_at,
});

export class OutboxStore {
  constructor(private readonly dialect: Dialect) {}

  /** Runs inside the submission's transaction (contract D18). */
  async enqueue(trx: Executor, submission: { id: string; formId: string }, items: DeliveryInput[], now: string): Promise<void> {
    if (items.length === 0) return;
    await trx
      .insertInto('outbox')
      .values(
        items.map((item) => ({
          id: newId(),
          submission_id: submission.id,
          form_id: submission.formId,
          kind: item.kind,
          target: item.target,
          payload: item.payload,
          ...newQueueRow(now),
          delivered_at: null,
        })),
      )
      .execute();
  }

  /** Claims up to `limit` due deliveries, the earliest due first, each leased until `leaseUntil` (`claimDueRows`). */
  async claimDue(db: Executor, now: string, leaseUntil: string, limit: number): Promise<Delivery[]> {
    const rows = await claimDueRows(db, this.dialect, 'outbox', { now, leaseUntil, limit });
    return rows.map(toDelivery);
  }

  /** Records one attempt and the delivery's new state (`recordAttemptOf`); run it in a transaction. */
  recordAttempt(trx: Executor, delivery: Delivery, outcome: DeliveryOutcome): Promise<void> {
    return recordAttemptOf(trx, 'outbox', delivery.id, outcome);
  }

  /** Every delivery of a submission with its attempts, oldest first. */
  async listForSubmission(db: Executor, submissionId: string): Promise<Array<{ delivery: Delivery; attempts: DeliveryAttempt[] }>> {
    const rows = await db.selectFrom('outbox').selectAll().where('submission_id', '=', submissionId).orderBy('id').execute();
    const attempts = await attemptsOf(
      db,
      'outbox',
      rows.map((r) => r.id),
    );
    return rows.map((row) => ({ delivery: toDelivery(row), attempts: attempts.get(row.id) ?? [] }));
  }

  /** How many deliveries wait (pending, leased ones included) and when the oldest of them was queued. */
  pendingStats(db: Executor): Promise<{ pending: number; oldestCreatedAt: string | null }> {
    return pendingStatsOf(db, 'outbox');
  }
}
