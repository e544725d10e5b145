import type { Kysely } from 'kysely';

// Frozen once landed. Flag hygiene (issue 11): when an upload of a whole (projectName, branch) scope no
// longer reports a slug that scope had references for, one row records when, and the references that
// disappeared (a JSON array, at most 20). A later upload that reports the slug again deletes the row.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('code_ref_removals')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('project_name', 'text', (c) => c.notNull())
    .addColumn('branch', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('removed_at', 'text', (c) => c.notNull())
    .addColumn('reference_count', 'integer', (c) => c.notNull())
    .addColumn('last_references', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('code_ref_removals_scope_idx')
    .on('code_ref_removals')
    .columns(['project_id', 'project_name', 'branch', 'slug'])
    .unique()
    .execute();
}
