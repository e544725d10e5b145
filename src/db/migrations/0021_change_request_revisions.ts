import { sql, type Kysely } from 'kysely';

// Frozen once landed. Issue 29 item 1 (docs/adr/0034-change-management.md): who wrote each revision of a
// change request, so that nobody who wrote one since its approvals were last reset approves it. A row per
// revision written; `approvals_reset` is 1 when writing it cleared approvals there were. Requests from
// before this migration get their first revision (by their author) and, for every later edit the audit
// log still holds, a row of the request's current revision by that edit's actor: their revisions are
// not known more precisely, so each such editor is kept from approving (title-only edits included).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('change_request_revisions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('change_request_id', 'text', (c) => c.notNull().references('change_requests.id').onDelete('cascade'))
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('author_type', 'text', (c) => c.notNull())
    .addColumn('author_id', 'text')
    .addColumn('author_label', 'text', (c) => c.notNull())
    .addColumn('approvals_reset', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('change_request_revisions_request_idx').on('change_request_revisions').columns(['change_request_id', 'revision']).execute();
  await sql`
    insert into change_request_revisions (id, change_request_id, revision, author_type, author_id, author_label, approvals_reset, created_at)
    select 'r1:' || id, id, 1, author_type, author_id, author_label, 0, created_at from change_requests
  `.execute(db);
  await sql`
    insert into change_request_revisions (id, change_request_id, revision, author_type, author_id, author_label, approvals_reset, created_at)
    select 'audit:' || a.id, r.id, r.revision, a.actor_type, a.actor_id, a.actor_label, 0, a.created_at
    from audit_log a join change_requests r on r.id = a.entity_id
    where a.entity = 'change_request' and a.action = 'change_request.updated' and r.revision > 1
  `.execute(db);
}
