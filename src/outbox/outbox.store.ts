import type { Selectable } from 'kysely';
import { fromBool, newId } from '../db/codec.ts';
import type { Dialect, Executor } from '../db/database.ts';
import type { Delivery, DeliveryAttempt, DeliveryInput, DeliveryKind, DeliveryStatus } from './outbox.ts';
import type { OutboxTable } from './outbox.table.ts';
import type { DeliveryOutcome } from './delivery-loop.ts';
import { claimDueRows, pendingStatsOf, toDeliveryAttempt } from './delivery-queue.store.ts';

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
          status: 'pending',
          attempts: 0,
          next_attempt_at: now,
          last_error: null,
          created_at: now,
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

  /** Records one attempt and the delivery's new state; run both in one transaction. */
  async recordAttempt(trx: Executor, delivery: Delivery, outcome: DeliveryOutcome): Promise<void> {
    const { attempt } = outcome;
    await trx
      .insertInto('delivery_attempts')
      .values({
        id: newId(),
        outbox_id: delivery.id,
        attempt: attempt.attempt,
        started_at: attempt.startedAt,
        duration_ms: attempt.durationMs,
        ok: fromBool(attempt.ok),
        status_code: attempt.statusCode,
        error: attempt.error,
      })
      .execute();
    await trx
      .updateTable('outbox')
      .set({
        status: outcome.status,
        next_attempt_at: outcome.nextAttemptAt,
        last_error: attempt.ok ? null : attempt.error,
        delivered_at: attempt.ok ? attempt.startedAt : null,
      })
      .where('id', '=', delivery.id)
      .execute();
  }

  /** Every delivery of a submission with its attempts, oldest first. */
  async listForSubmission(db: Executor, submissionId: string): Promise<Array<{ delivery: Delivery; attempts: DeliveryAttempt[] }>> {
    const rows = await db.selectFrom('outbox').selectAll().where('submission_id', '=', submissionId).orderBy('id').execute();
    if (rows.length === 0) return [];
    const attempts = await db
      .selectFrom('delivery_attempts')
      .selectAll()
      .where(
        'outbox_id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('attempt')
      .execute();
    return rows.map((row) => ({
      delivery: toDelivery(row),
      attempts: attempts.filter((a) => a.outbox_id === row.id).map(toDeliveryAttempt),
    }));
  }

  /** How many deliveries wait (pending, leased ones included) and when the oldest of them was queued. */
  pendingStats(db: Executor): Promise<{ pending: number; oldestCreatedAt: string | null }> {
    return pendingStatsOf(db, 'outbox');
  }
}
