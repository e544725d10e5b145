import type { Kysely } from 'kysely';

// Frozen once landed. flagd's sync service (issue 21): at most one sync token per environment, kept as
// its SHA-256 only. Deleting the environment deletes its token.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('flagd_sync_tokens')
    .addColumn('environment_id', 'text', (c) => c.primaryKey().references('environments.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('token_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
