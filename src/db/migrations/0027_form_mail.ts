import type { Kysely } from 'kysely';

// Frozen once landed. Issue 34 (docs/adr/0048-form-mail-templates-and-deliveries.md): e-mail people can
// answer, routing and replayable deliveries of forms.
// - forms: `notifications`, `auto_response` and `webhooks` (JSON text; null: off).
// - outbox: indexes for a form's failed deliveries (re-send) and for the auto-response limit (a form's
//   deliveries of one kind to one address since a time).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('forms').addColumn('notifications', 'text').execute();
  await db.schema.alterTable('forms').addColumn('auto_response', 'text').execute();
  await db.schema.alterTable('forms').addColumn('webhooks', 'text').execute();
  await db.schema.createIndex('outbox_form_status_idx').on('outbox').columns(['form_id', 'status']).execute();
  await db.schema.createIndex('outbox_form_kind_target_idx').on('outbox').columns(['form_id', 'kind', 'target', 'created_at']).execute();
}
