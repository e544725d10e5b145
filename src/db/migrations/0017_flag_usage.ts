import { type Kysely, sql } from 'kysely';

// Frozen once landed. Flag usage (issue 23, docs/adr/0035-usage-counting.md): evaluations per
// environment, flag slug and UTC hour, added to by every instance's flushes (upsert-add), so the primary
// key is the bucket. `evaluations` is bigint on PostgreSQL (a busy flag passes 2^31 in a retention
// period only summed, but one row must never be the limit). `usage_counting_since` in settings records
// when counting began, so that the stale-flag rule "not evaluated for N days" waits N days after an
// upgrade instead of calling every flag unused.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('flag_usage')
    .addColumn('environment_id', 'text', (c) => c.notNull())
    .addColumn('flag_slug', 'text', (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('evaluations', 'bigint', (c) => c.notNull())
    .addColumn('last_evaluated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('flag_usage_pk', ['environment_id', 'flag_slug', 'hour'])
    .execute();
  await db.schema.createIndex('flag_usage_hour_idx').on('flag_usage').column('hour').execute();
  await sql`insert into settings (key, value, created_at) values ('usage_counting_since', ${new Date().toISOString()}, ${new Date().toISOString()})`.execute(
    db,
  );
}
