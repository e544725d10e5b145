import type { Kysely } from 'kysely';

// Frozen once landed. Project webhooks (issue 23, docs/adr/0040-project-webhooks.md): a project's
// subscriptions to flag-change events, their deliveries (written in the transaction of the change, with
// `seq` in commit order per webhook, taken under a lock of the webhook's row) and every attempt. The
// outbox of submissions is not reused as a table: its rows belong to a submission (NOT NULL FK).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('project_webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('preset', 'text')
    .addColumn('secret', 'text')
    .addColumn('last_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('project_webhooks_project_idx').on('project_webhooks').column('project_id').execute();
  await db.schema
    .createTable('project_webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('project_webhooks.id').onDelete('cascade'))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .execute();
  await db.schema.createIndex('project_webhook_deliveries_seq_idx').on('project_webhook_deliveries').columns(['webhook_id', 'seq']).unique().execute();
  await db.schema.createIndex('project_webhook_deliveries_due_idx').on('project_webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema
    .createTable('project_webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('project_webhook_deliveries.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('ok', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('project_webhook_attempts_delivery_idx').on('project_webhook_attempts').column('delivery_id').execute();
}
