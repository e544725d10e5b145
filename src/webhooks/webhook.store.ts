import { type Selectable, sql } from 'kysely';
import { newId } from '../db/codec.ts';
import type { Dialect, Executor } from '../db/database.ts';
import { attemptsOf, claimDueRows, type DeliveryAttempt, type DeliveryOutcome, newQueueRow, pendingStatsOf, recordAttemptOf } from '../delivery/index.ts';
import type { ProjectWebhook, WebhookDelivery, WebhookDeliveryStatus, WebhookEvent, WebhookPreset } from './webhook.ts';
import type { ProjectWebhookDeliveriesTable, ProjectWebhooksTable } from './webhook.table.ts';

const toWebhook = (row: Selectable<ProjectWebhooksTable>): ProjectWebhook => ({
  id: row.id,
  projectId: row.project_id,
  url: row.url,
  events: JSON.parse(row.events) as WebhookEvent[],
  preset: row.preset as WebhookPreset | null,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toDelivery = (row: Selectable<ProjectWebhookDeliveriesTable>): WebhookDelivery => ({
  id: row.id,
  webhookId: row.webhook_id,
  seq: Number(row.seq),
  event: row.event as WebhookEvent,
  payload: row.payload,
  status: row.status as WebhookDeliveryStatus,
  attempts: Number(row.attempts),
  nextAttemptAt: row.next_attempt_at,
  lastError: row.last_error,
  createdAt: row.created_at,
  deliveredAt: row.delivered_at,
});

/** A webhook as stored, with its signing secret (null for presets). */
export type StoredWebhook = ProjectWebhook & { secret: string | null };

export class WebhookStore {
  constructor(private readonly dialect: Dialect) {}

  async insert(db: Executor, webhook: StoredWebhook): Promise<void> {
    await db
      .insertInto('project_webhooks')
      .values({
        id: webhook.id,
        project_id: webhook.projectId,
        url: webhook.url,
        events: JSON.stringify(webhook.events),
        preset: webhook.preset,
        secret: webhook.secret,
        last_seq: 0,
        created_at: webhook.createdAt,
        updated_at: webhook.updatedAt,
      })
      .execute();
  }

  async update(db: Executor, webhook: ProjectWebhook): Promise<boolean> {
    const result = await db
      .updateTable('project_webhooks')
      .set({ url: webhook.url, events: JSON.stringify(webhook.events), updated_at: webhook.updatedAt })
      .where('id', '=', webhook.id)
      .where('project_id', '=', webhook.projectId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(db: Executor, projectId: string, id: string): Promise<boolean> {
    const result = await db.deleteFrom('project_webhooks').where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async find(db: Executor, projectId: string, id: string): Promise<StoredWebhook | undefined> {
    const row = await db.selectFrom('project_webhooks').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
    return row && { ...toWebhook(row), secret: row.secret };
  }

  /** Where a webhook's deliveries go, as it is now (a changed URL applies to pending retries). */
  async targetOf(db: Executor, id: string): Promise<{ url: string; secret: string | null } | undefined> {
    const row = await db.selectFrom('project_webhooks').select(['url', 'secret']).where('id', '=', id).executeTakeFirst();
    return row && { url: row.url, secret: row.secret };
  }

  /** A project's key, read in the writing transaction (the payload names the project by it). */
  async projectKeyOf(db: Executor, projectId: string): Promise<string | undefined> {
    const row = await db.selectFrom('projects').select('key').where('id', '=', projectId).executeTakeFirst();
    return row?.key;
  }

  /** Oldest first. */
  async listForProject(db: Executor, projectId: string): Promise<ProjectWebhook[]> {
    const rows = await db.selectFrom('project_webhooks').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toWebhook);
  }

  /**
   * Queues one event for a webhook within the writing transaction. Its number is taken by incrementing
   * the webhook's `last_seq`, which locks the webhook's row until the commit: two transactions queueing
   * for one webhook number their events in the order they commit.
   */
  async enqueue(trx: Executor, webhookId: string, event: WebhookEvent, payload: string, now: string): Promise<string> {
    const { last_seq } = await trx
      .updateTable('project_webhooks')
      .set({ last_seq: sql`last_seq + 1` })
      .where('id', '=', webhookId)
      .returning('last_seq')
      .executeTakeFirstOrThrow();
    const id = newId();
    await trx
      .insertInto('project_webhook_deliveries')
      .values({
        id,
        webhook_id: webhookId,
        seq: Number(last_seq),
        event,
        payload,
        ...newQueueRow(now),
        delivered_at: null,
      })
      .execute();
    return id;
  }

  /**
   * Claims up to `limit` due deliveries, each the oldest pending one of its webhook (a webhook's events
   * go out in order: the next waits while an earlier one is pending, leased or due later). Each gets its
   * attempt counted and a lease until `leaseUntil` (`claimDueRows`: on PostgreSQL `FOR UPDATE SKIP
   * LOCKED` keeps two instances from claiming one row; SQLite serialises writers).
   */
  async claimDue(db: Executor, now: string, leaseUntil: string, limit: number): Promise<WebhookDelivery[]> {
    const rows = await claimDueRows(db, this.dialect, 'project_webhook_deliveries', {
      now,
      leaseUntil,
      limit,
      // The ordering rule: no earlier pending delivery of the same webhook.
      onlyIf: ({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('project_webhook_deliveries as e')
              .select('e.id')
              .whereRef('e.webhook_id', '=', 'd.webhook_id')
              .where('e.status', '=', 'pending')
              .whereRef('e.seq', '<', 'd.seq'),
          ),
        ),
    });
    return rows.map(toDelivery);
  }

  /** Records one attempt and the delivery's new state (`recordAttemptOf`); run it in a transaction. */
  recordAttempt(trx: Executor, delivery: WebhookDelivery, outcome: DeliveryOutcome): Promise<void> {
    return recordAttemptOf(trx, 'project_webhook_deliveries', delivery.id, outcome);
  }

  /** How many deliveries wait (pending, leased ones included) and when the oldest of them was queued. */
  pendingStats(db: Executor): Promise<{ pending: number; oldestCreatedAt: string | null }> {
    return pendingStatsOf(db, 'project_webhook_deliveries');
  }

  async findDelivery(db: Executor, webhookId: string, id: string): Promise<WebhookDelivery | undefined> {
    const row = await db.selectFrom('project_webhook_deliveries').selectAll().where('id', '=', id).where('webhook_id', '=', webhookId).executeTakeFirst();
    return row && toDelivery(row);
  }

  /** A webhook's deliveries, newest first, at most `limit`, with their attempts. */
  async listDeliveries(db: Executor, webhookId: string, limit: number): Promise<Array<{ delivery: WebhookDelivery; attempts: DeliveryAttempt[] }>> {
    const rows = await db
      .selectFrom('project_webhook_deliveries')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .orderBy('seq', 'desc')
      .limit(limit)
      .execute();
    const attempts = await attemptsOf(
      db,
      'project_webhook_deliveries',
      rows.map((r) => r.id),
    );
    return rows.map((row) => ({ delivery: toDelivery(row), attempts: attempts.get(row.id) ?? [] }));
  }
}
