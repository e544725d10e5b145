import { type Kysely, sql } from 'kysely';

// Frozen once landed. Targeting (issue 18). Every flag row (one per flag and environment) gets a type,
// named variants, a default variant, flagd's state, ordered rules, prerequisites, flagd metadata and, for imported
// targeting that is not expressible as rules, its JSON Logic. JSON is text. Existing rows become boolean
// flags with the standard variants whose default serve is their switch: enabled -> 'on', else 'off'.
// Segments are reusable groups of conditions, per project, referenced by key from rules.
export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite adds one column per ALTER TABLE statement.
  await db.schema
    .alterTable('flags')
    .addColumn('type', 'text', (c) => c.notNull().defaultTo('boolean'))
    .execute();
  await db.schema
    .alterTable('flags')
    .addColumn('variants', 'text', (c) => c.notNull().defaultTo('{"on":true,"off":false}'))
    .execute();
  await db.schema.alterTable('flags').addColumn('default_variant', 'text').execute();
  await db.schema
    .alterTable('flags')
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('ENABLED'))
    .execute();
  await db.schema
    .alterTable('flags')
    .addColumn('rules', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema
    .alterTable('flags')
    .addColumn('prerequisites', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema.alterTable('flags').addColumn('json_logic', 'text').execute();
  // flagd flag metadata (strings, numbers, booleans), returned with every evaluation; null when none.
  await db.schema.alterTable('flags').addColumn('metadata', 'text').execute();
  await sql`update flags set default_variant = case when enabled = 1 then 'on' else 'off' end`.execute(db);

  await db.schema
    .createTable('segments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('match', 'text', (c) => c.notNull().defaultTo('all'))
    .addColumn('conditions', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('segments_project_key_unique', ['project_id', 'key'])
    .execute();
}
