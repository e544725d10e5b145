import { type Kysely, sql } from 'kysely';

// Frozen once landed. Releases (issue 33, docs/adr/0045-releases.md): release plans of a flag in one
// environment, the project's release templates, the e-mails a rollback sends, and each guardrail's
// readings over time (the dashboard's chart of the two arms).
//
// A release moves only by an update conditional on its `version` (`where id = ? and version = ?`): of two
// instances deciding the same move, one changes the row and the other none. The partial unique index
// keeps one active release per flag and environment on both engines, whatever the race.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('releases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('flag_slug', 'text', (c) => c.notNull())
    // running | waiting_approval | paused | completed | rolled_back | cancelled
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('baseline', 'text', (c) => c.notNull())
    .addColumn('steps', 'text', (c) => c.notNull())
    .addColumn('progress', 'text', (c) => c.notNull())
    .addColumn('current_step', 'integer', (c) => c.notNull())
    .addColumn('guardrails', 'text', (c) => c.notNull())
    .addColumn('readings', 'text', (c) => c.notNull())
    .addColumn('template_key', 'text')
    .addColumn('rolled_back_reason', 'text')
    // JSON of the creator's actor (type, id, label).
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('releases_flag_idx').on('releases').columns(['environment_id', 'flag_slug', 'created_at']).execute();
  await db.schema.createIndex('releases_status_idx').on('releases').column('status').execute();
  await db.schema
    .createIndex('releases_one_active_idx')
    .on('releases')
    .columns(['environment_id', 'flag_slug'])
    .unique()
    .where(sql.ref('status'), 'in', ['running', 'waiting_approval', 'paused'])
    .execute();

  await db.schema
    .createTable('release_templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('steps', 'text', (c) => c.notNull())
    .addColumn('guardrails', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('release_templates_key_unique', ['project_id', 'key'])
    .execute();

  // One row per guardrail and check of a running release: what the chart of the two arms draws.
  await db.schema
    .createTable('release_readings')
    .addColumn('release_id', 'text', (c) => c.notNull().references('releases.id').onDelete('cascade'))
    .addColumn('guardrail', 'integer', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    // JSON: users per arm, the arms' means, the lift and its intervals, or a Prometheus value.
    .addColumn('reading', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('release_readings_idx').on('release_readings').columns(['release_id', 'guardrail', 'at']).execute();

  // E-mails about releases (a rollback, to the creator), sent by the release guard's rounds.
  await db.schema
    .createTable('release_notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('release_id', 'text', (c) => c.notNull().references('releases.id').onDelete('cascade'))
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    // pending | sent | failed
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('sent_at', 'text')
    .execute();
  await db.schema.createIndex('release_notifications_due_idx').on('release_notifications').columns(['status', 'next_attempt_at']).execute();
}
