import type { Kysely } from 'kysely';

// Frozen once landed. Issue 31 item 3: what a change request changed stays readable after it is applied.
// `applied_before` holds, per changed flag or segment, the configuration it replaced when the request was
// applied (JSON; the JSON text null for a segment the request created). SQL null: not applied yet, or
// applied before this migration, when Flagpost did not keep it (the dashboard says so, and the history
// still has each write's before and after).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('change_items').addColumn('applied_before', 'text').execute();
}
