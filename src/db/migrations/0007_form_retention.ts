import type { Kysely } from 'kysely';

// Frozen once landed. Retention per form (issue 12): submissions older than `retention_days` are
// deleted by the retention job; `delete_files_after_delivery` drops a submission's files once all its
// deliveries succeeded.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('forms').addColumn('retention_days', 'integer').execute();
  await db.schema
    .alterTable('forms')
    .addColumn('delete_files_after_delivery', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
