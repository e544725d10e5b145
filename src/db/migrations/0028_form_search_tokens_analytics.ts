import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed. Issue 34, the reading half (docs/adr/0049-form-search-and-read-tokens.md):
// - full-text search over a submission's field values. SQLite: an FTS5 table (contentless, so the text is
//   not kept twice) whose rowid comes from `submission_search_rows`, an explicit INTEGER PRIMARY KEY that
//   VACUUM never renumbers (a submission's own rowid may change); a trigger removes both when a
//   submission goes, however it goes (delete, erasure, retention, a form's cascade). PostgreSQL: a
//   `search` tsvector column of `submissions` with a GIN index, gone with its row.
//   The application writes the text on insert; existing rows are backfilled here with the same rule.
// - `form_read_tokens`: per-form read-only tokens for integrations, kept as SHA-256 hashes.
// - `form_view_counts`: views per form and UTC day (no personal data), and `forms.analytics` (JSON, null: off).
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (postgres) {
    await sql`alter table submissions add column search tsvector`.execute(db);
    await sql`create index submissions_search_idx on submissions using gin (search)`.execute(db);
  } else {
    await sql`create table submission_search_rows (id integer primary key, submission_id text not null unique)`.execute(db);
    await sql`create virtual table submission_search using fts5(body, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0')`.execute(db);
    await sql`create trigger submission_search_forget after delete on submissions begin
      delete from submission_search where rowid in (select id from submission_search_rows where submission_id = old.id);
      delete from submission_search_rows where submission_id = old.id;
    end`.execute(db);
  }
  await backfill(db, postgres);

  await db.schema
    .createTable('form_read_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('form_id', 'text', (c) => c.notNull().references('forms.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_prefix', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('form_read_tokens_form_idx').on('form_read_tokens').column('form_id').execute();

  await db.schema
    .createTable('form_view_counts')
    .addColumn('form_id', 'text', (c) => c.notNull().references('forms.id').onDelete('cascade'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('views', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('form_view_counts_pk', ['form_id', 'day'])
    .execute();
  await db.schema.alterTable('forms').addColumn('analytics', 'text').execute();
  // The analytics read a form's deliveries by day (its submissions have submissions_form_created_idx).
  await db.schema.createIndex('outbox_form_created_idx').on('outbox').columns(['form_id', 'created_at']).execute();
}

/** Characters of field text indexed per submission, at most (PostgreSQL's tsvector holds 1 MB). */
const MAX_SEARCH_CHARS = 100_000;

/** The rule of src/submissions/search-text.ts at the time of this migration (migrations import no application code). */
function searchText(data: unknown): string {
  const words: string[] = [];
  let length = 0;
  const visit = (value: unknown): void => {
    if (length >= MAX_SEARCH_CHARS) return;
    if (Array.isArray(value)) return value.forEach(visit);
    if (value !== null && typeof value === 'object') return Object.values(value).forEach(visit);
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return;
    for (const word of String(value)
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []) {
      words.push(word);
      length += word.length + 1;
    }
  };
  visit(data);
  return words.join(' ').slice(0, MAX_SEARCH_CHARS);
}

async function backfill(db: Kysely<unknown>, postgres: boolean): Promise<void> {
  let after = '';
  for (;;) {
    const { rows } = await sql<{ id: string; data: string }>`select id, data from submissions where id > ${after} order by id limit 500`.execute(db);
    if (rows.length === 0) return;
    for (const row of rows) {
      let data: unknown = {};
      try {
        data = JSON.parse(row.data);
      } catch {
        // Flagpost wrote every row as JSON; an unreadable one is left unindexed rather than stopping the migration.
      }
      const text = searchText(data);
      if (postgres) await sql`update submissions set search = to_tsvector('simple', ${text}) where id = ${row.id}`.execute(db);
      else {
        const inserted = await sql<{ id: number }>`insert into submission_search_rows (submission_id) values (${row.id}) returning id`.execute(db);
        await sql`insert into submission_search (rowid, body) values (${inserted.rows[0]!.id}, ${text})`.execute(db);
      }
    }
    after = rows[rows.length - 1]!.id;
  }
}
