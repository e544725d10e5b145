import { type Kysely, sql } from 'kysely';

// Frozen once landed. Each delivery names the form it belongs to, so that the outbox asks the forms
// capability for the form's current webhook secret without reading submissions. Existing rows are
// filled in from their submission; the column stays nullable on both engines (SQLite cannot add a
// NOT NULL column without a default).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('outbox').addColumn('form_id', 'text').execute();
  await sql`update outbox set form_id = (select form_id from submissions where submissions.id = outbox.submission_id)`.execute(db);
}
