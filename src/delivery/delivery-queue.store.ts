import { type Expression, type ExpressionBuilder, type Kysely, type Selectable, type SqlBool, sql } from 'kysely';
import { fromBool, newId, toBool } from '../db/codec.ts';
import type { Database, Dialect, Executor } from '../db/database.ts';
import type { DeliveryOutcome } from './delivery-loop.ts';
import type { DeliveryAttempt } from './delivery.ts';

// The SQL the delivery queues share (src/delivery/delivery-loop.ts): every queue table has `id`, `status`,
// `attempts` and `next_attempt_at` (the due time, and while an attempt runs the end of its lease), with an
// index on (status, next_attempt_at).

/** The tables of delivery queues. */
export type QueueTable = 'outbox' | 'project_webhook_deliveries' | 'change_notifications' | 'release_notifications';

/** What a claim reads and writes of a queue's row. */
interface QueueRow {
  id: string;
  status: string;
  attempts: number;
  next_attempt_at: string;
}

/** A condition on the due row `d`, for a queue whose rows are not all claimable when due. */
export type ClaimCondition<T extends QueueTable> = (eb: ExpressionBuilder<Database & { d: Database[T] }, 'd'>) => Expression<SqlBool>;

/** The queue columns of a new row: pending, due now, never attempted. */
export const newQueueRow = (now: string) => ({ status: 'pending', attempts: 0, next_attempt_at: now, last_error: null, created_at: now });

/**
 * Claims up to `limit` pending rows of `table` due at `now` (the earliest due first) in one statement:
 * each gets its attempt counted and a lease until `leaseUntil`, after which a crashed attempt is due
 * again. `onlyIf` narrows which due rows may be claimed. On PostgreSQL the inner select takes
 * `FOR UPDATE SKIP LOCKED`, so instances claiming at once never get the same row; SQLite serialises writers.
 */
export async function claimDueRows<T extends QueueTable>(
  db: Executor,
  dialect: Dialect,
  table: T,
  due: { now: string; leaseUntil: string; limit: number; onlyIf?: ClaimCondition<T> },
): Promise<Array<Selectable<Database[T]>>> {
  // Kysely types a builder over tables it knows by name; the statement is built over a view of the
  // database in which each queue table is just the columns of the claim.
  const queues = db as unknown as Kysely<Record<QueueTable, QueueRow>>;
  const rows = await queues
    .updateTable(table as QueueTable)
    .set({ next_attempt_at: due.leaseUntil, attempts: sql<number>`attempts + 1` })
    .where('id', 'in', (eb) => {
      const candidates = eb
        .selectFrom(`${table as QueueTable} as d`)
        .select('d.id')
        .where('d.status', '=', 'pending')
        .where('d.next_attempt_at', '<=', due.now)
        .$if(due.onlyIf !== undefined, (q) => q.where((d) => due.onlyIf!(d as unknown as Parameters<ClaimCondition<T>>[0])))
        .orderBy('d.next_attempt_at')
        .limit(due.limit);
      return dialect === 'postgres' ? candidates.forUpdate().skipLocked() : candidates;
    })
    .where('status', '=', 'pending')
    .returningAll()
    .execute();
  return rows as unknown as Array<Selectable<Database[T]>>;
}

/** How many rows of `table` wait (pending, leased ones included) and when the oldest of them was queued. */
export async function pendingStatsOf(db: Executor, table: QueueTable): Promise<{ pending: number; oldestCreatedAt: string | null }> {
  const queues = db as unknown as Kysely<Record<QueueTable, QueueRow & { created_at: string }>>;
  const row = await queues
    .selectFrom(table)
    .select([(eb) => eb.fn.countAll<number | string>().as('pending'), (eb) => eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return { pending: Number(row.pending), oldestCreatedAt: row.oldest ?? null };
}

/** The e-mail queues that keep no attempt history: a row records its last outcome itself. */
export type MailQueue = 'change_notifications' | 'release_notifications';

/** Writes an e-mail attempt's outcome on its row: sent (at the attempt's end), pending again (at its next time), or failed. */
export async function recordMailOutcome(db: Executor, table: MailQueue, id: string, outcome: DeliveryOutcome): Promise<void> {
  const { attempt, status, nextAttemptAt } = outcome;
  const queues = db as unknown as Kysely<Record<MailQueue, QueueRow & { last_error: string | null; sent_at: string | null }>>;
  await queues
    .updateTable(table)
    .set({
      status: status === 'delivered' ? 'sent' : status,
      next_attempt_at: nextAttemptAt,
      last_error: attempt.ok ? null : attempt.error,
      sent_at: attempt.ok ? nextAttemptAt : null,
    })
    .where('id', '=', id)
    .execute();
}

/** The queues whose attempts are kept as a history (the API shows them); change-request e-mails keep none. */
export type HistoryQueue = 'outbox' | 'project_webhook_deliveries';

/** Each history queue's attempts table and the column naming the attempt's delivery. */
const HISTORY = {
  outbox: { table: 'delivery_attempts', owner: 'outbox_id' },
  project_webhook_deliveries: { table: 'project_webhook_attempts', owner: 'delivery_id' },
} as const;

type AttemptTable = (typeof HISTORY)[HistoryQueue]['table'];
type AttemptOwner = (typeof HISTORY)[HistoryQueue]['owner'];
type AttemptColumns = Omit<Database['delivery_attempts'], 'outbox_id'>;

/** The history queues and their attempts tables as one shape each (a row has the one owner column of its table). */
const historyTables = (db: Executor) =>
  db as unknown as Kysely<
    Record<AttemptTable, AttemptColumns & Partial<Record<AttemptOwner, string>>> &
      Record<HistoryQueue, QueueRow & { last_error: string | null; delivered_at: string | null }>
  >;

/**
 * Records one attempt in the queue's history and the delivery's new state: delivered (at the attempt's
 * start), pending again (at its next time) or failed. The caller runs both in one transaction.
 */
export async function recordAttemptOf(trx: Executor, queue: HistoryQueue, id: string, outcome: DeliveryOutcome): Promise<void> {
  const { attempt } = outcome;
  const { table, owner } = HISTORY[queue];
  await historyTables(trx)
    .insertInto(table)
    .values({
      id: newId(),
      [owner]: id,
      attempt: attempt.attempt,
      started_at: attempt.startedAt,
      duration_ms: attempt.durationMs,
      ok: fromBool(attempt.ok),
      status_code: attempt.statusCode,
      error: attempt.error,
    })
    .execute();
  await historyTables(trx)
    .updateTable(queue)
    .set({
      status: outcome.status,
      next_attempt_at: outcome.nextAttemptAt,
      last_error: attempt.ok ? null : attempt.error,
      delivered_at: attempt.ok ? attempt.startedAt : null,
    })
    .where('id', '=', id)
    .execute();
}

/** The attempts of the queue's deliveries `ids`, first attempt first, by delivery (every id has an entry). */
export async function attemptsOf(db: Executor, queue: HistoryQueue, ids: string[]): Promise<Map<string, DeliveryAttempt[]>> {
  const byDelivery = new Map(ids.map((id): [string, DeliveryAttempt[]] => [id, []]));
  if (ids.length === 0) return byDelivery;
  const { table, owner } = HISTORY[queue];
  const rows = await historyTables(db)
    .selectFrom(table)
    .select((eb) => ['attempt', 'started_at', 'duration_ms', 'ok', 'status_code', 'error', eb.ref(owner).$notNull().as('owner')])
    .where(owner, 'in', ids)
    // In time order: a re-sent delivery (issue 34) counts its attempts from 1 again.
    .orderBy('started_at')
    .orderBy('attempt')
    .execute();
  for (const row of rows) byDelivery.get(String(row.owner))?.push(toDeliveryAttempt(row));
  return byDelivery;
}

/** A row of an attempts table as the API shows it. */
const toDeliveryAttempt = (a: Omit<AttemptColumns, 'id'>): DeliveryAttempt => ({
  attempt: Number(a.attempt),
  startedAt: a.started_at,
  durationMs: Number(a.duration_ms),
  ok: toBool(a.ok),
  statusCode: a.status_code === null ? null : Number(a.status_code),
  error: a.error,
});
