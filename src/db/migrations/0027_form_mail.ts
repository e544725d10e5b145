import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed. Issue 34 (docs/adr/0048-form-mail-templates-and-deliveries.md): e-mail people can
// answer, routing, replayable deliveries, reading and analytics of forms.
// - forms: `notifications`, `auto_response` and `webhooks` (JSON text; null: off), `read_token_hash`
//   (SHA-256 of a form's read-only integration token; null: none), `count_views` (0/1).
// - form_views: views of a form's page per UTC day (no personal data: a count only).
// - outbox: indexes for a form's failed deliveries and for the auto-response limit (address per form).
// - full-text search over a submission's fields: an FTS5 table kept by triggers on SQLite, a generated
//   tsvector column with a GIN index on PostgreSQL ('simple' configuration: no language is assumed).
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable('forms').addColumn('notifications', 'text').execute();
  await db.schema.alterTable('forms').addColumn('auto_response', 'text').execute();
  await db.schema.alterTable('forms').addColumn('webhooks', 'text').execute();
  await db.schema.alterTable('forms').addColumn('read_token_hash', 'text').execute();
  await db.schema
    .alterTable('forms')
    .addColumn('count_views', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('forms_read_token_idx').on('forms').column('read_token_hash').execute();

  await db.schema
    .createTable('form_views')
    .addColumn('form_id', 'text', (c) => c.notNull().references('forms.id').onDelete('cascade'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('views', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('form_views_pk', ['form_id', 'day'])
    .execute();

  await db.schema.createIndex('outbox_form_status_idx').on('outbox').columns(['form_id', 'status']).execute();
  await db.schema.createIndex('outbox_form_kind_target_idx').on('outbox').columns(['form_id', 'kind', 'target', 'created_at']).execute();

  if (postgres) {
    await sql`alter table submissions add column search tsvector generated always as (to_tsvector('simple', data)) stored`.execute(db);
    await sql`create index submissions_search_idx on submissions using gin (search)`.execute(db);
  } else {
    // A contentless FTS5 index (the text stays in `submissions` only) keyed by `submission_search.seq`:
    // an INTEGER PRIMARY KEY, which VACUUM never renumbers (a submission's own rowid it may).
    await sql`create table submission_search (seq integer primary key, submission_id text not null unique)`.execute(db);
    await sql`create virtual table submissions_fts using fts5(data, content='', contentless_delete=1)`.execute(db);
    await sql`create trigger submissions_fts_insert after insert on submissions begin
      insert into submission_search(submission_id) values (new.id);
      insert into submissions_fts(rowid, data) select seq, new.data from submission_search where submission_id = new.id;
    end`.execute(db);
    await sql`create trigger submissions_fts_delete after delete on submissions begin
      delete from submissions_fts where rowid = (select seq from submission_search where submission_id = old.id);
      delete from submission_search where submission_id = old.id;
    end`.execute(db);
    await sql`create trigger submissions_fts_update after update of data on submissions begin
      delete from submissions_fts where rowid = (select seq from submission_search where submission_id = old.id);
      insert into submissions_fts(rowid, data) select seq, new.data from submission_search where submission_id = new.id;
    end`.execute(db);
    await sql`insert into submission_search(submission_id) select id from submissions order by created_at, id`.execute(db);
    await sql`insert into submissions_fts(rowid, data) select s.seq, t.data from submission_search s join submissions t on t.id = s.submission_id`.execute(db);
  }
}
