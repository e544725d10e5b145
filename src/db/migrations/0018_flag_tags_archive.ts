import type { Kysely } from 'kysely';

// Frozen once landed. Issue 22: a flag's tags (a JSON array of strings) and when it was archived (ISO
// text, null while it is not), the same on every environment's row of a slug, like `type`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('flags')
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema.alterTable('flags').addColumn('archived_at', 'text').execute();
}
