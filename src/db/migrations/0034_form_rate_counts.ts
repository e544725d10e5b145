import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed. Issue 34 (docs/adr/0046-spam-checks.md, "The rate limit counts, it does not
// scan"): the per-form rate limit's counts, per form, scope ('' for the whole form, else the sender's
// address) and second since the epoch. A submission of a form with a rate limit adds one to its second's
// rows in the transaction that stores it; the check sums the last 60 seconds' rows (at most 60 rows of
// the primary key) instead of counting the submissions themselves, which a busy form has thousands of.
// The retention job deletes rows older than the window. On SQLite the table is its primary key (WITHOUT
// ROWID): the sum reads one run of adjacent index entries, not a table row per entry.
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('form_rate_counts')
    .addColumn('form_id', 'text', (c) => c.notNull().references('forms.id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('second', 'bigint', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('form_rate_counts_pk', ['form_id', 'scope', 'second'])
    .$call((table) => (postgres ? table : table.modifyEnd(sql`without rowid`)))
    .execute();
  await db.schema.createIndex('form_rate_counts_second_idx').on('form_rate_counts').column('second').execute();
}
