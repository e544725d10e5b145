import type { Kysely } from 'kysely';

// Frozen once landed. Files outside the database (issue 19, docs/adr/0030-file-storage.md): each file row
// says where its bytes are (`db`: in `content`, as before; `fs` or `s3`: the object `object_key`, with an
// empty `content`). `file_objects` is the ledger of objects that no committed file row vouches for: an
// upload under way (`uploading`, written before the first byte goes to the store, removed in the
// transaction that commits its file row) or an object to delete (`deleting`, written in the transaction
// that deleted its file row). The sweep deletes what the ledger lists, so no failure leaves an object behind.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('submission_files')
    .addColumn('storage', 'text', (c) => c.notNull().defaultTo('db'))
    .execute();
  await db.schema.alterTable('submission_files').addColumn('object_key', 'text').execute();
  await db.schema.createIndex('submission_files_object_key_idx').on('submission_files').column('object_key').execute();
  await db.schema.createIndex('submission_files_storage_idx').on('submission_files').columns(['storage', 'id']).execute();

  await db.schema
    .createTable('file_objects')
    .addColumn('object_key', 'text', (c) => c.primaryKey())
    .addColumn('storage', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('claimed_at', 'text')
    .execute();
  await db.schema.createIndex('file_objects_state_idx').on('file_objects').columns(['state', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('file_objects').ifExists().execute();
  await db.schema.dropIndex('submission_files_storage_idx').ifExists().execute();
  await db.schema.dropIndex('submission_files_object_key_idx').ifExists().execute();
  await db.schema.alterTable('submission_files').dropColumn('object_key').execute();
  await db.schema.alterTable('submission_files').dropColumn('storage').execute();
}
