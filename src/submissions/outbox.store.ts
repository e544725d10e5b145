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

  /** A delivery of a form, or undefined. */
  async findOfForm(db: Executor, formId: string, id: string): Promise<Delivery | undefined> {
    const row = await db.selectFrom('outbox').selectAll().where('form_id', '=', formId).where('id', '=', id).executeTakeFirst();
    return row ? toDelivery(row) : undefined;
  }

  /**
   * Queues deliveries of a form again, due now with a fresh count of attempts (their history stays):
   * `id` one of them, else every failed one. Pending ones are left alone (one may be under way). Returns how many.
   */
  async requeue(db: Executor, formId: string, now: string, id?: string): Promise<number> {
    const result = await db
      .updateTable('outbox')
      .set({ status: 'pending', attempts: 0, next_attempt_at: now })
      .where('form_id', '=', formId)
      .$if(id !== undefined, (q) => q.where('id', '=', id!).where('status', '!=', 'pending'))
      .$if(id === undefined, (q) => q.where('status', '=', 'failed'))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** True when a delivery of this kind to `target` was queued for the form since `since` (the auto-response limit). */
  async queuedSince(db: Executor, formId: string, kind: DeliveryKind, target: string, since: string): Promise<boolean> {
    const row = await db
      .selectFrom('outbox')
      .select('id')
      .where('form_id', '=', formId)
      .where('kind', '=', kind)
      .where('target', '=', target)
      .where('created_at', '>=', since)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** How many deliveries wait (pending, leased ones included) and when the oldest of them was queued. */
  pendingStats(db: Executor): Promise<{ pending: number; oldestCreatedAt: string | null }> {
    return pendingStatsOf(db, 'outbox');
  }
}
