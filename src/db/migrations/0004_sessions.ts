import type { Kysely } from 'kysely';

// Frozen once landed. Dashboard sign-in sessions (issue 9): the session token is kept only as its
// SHA-256 hash, with its expiry; signing out deletes the row.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_expires_idx').on('sessions').column('expires_at').execute();
}
