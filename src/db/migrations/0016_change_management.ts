import type { Kysely } from 'kysely';

// Frozen once landed. Change management (issue 24). Environments can be protected and require a number
// of approvals; flag rows (one per flag and environment) and segments carry a version that every write
// increments, so that a change based on one version can tell that another write came in between.
// A change request groups the new full configurations of flags of one environment and of segments of
// its project, with approvals (one per member), comments and an optional time to apply it at.
export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite adds one column per ALTER TABLE statement.
  await db.schema
    .alterTable('environments')
    .addColumn('protected', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('environments')
    .addColumn('required_approvals', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable('flags')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable('segments')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();

  await db.schema
    .createTable('change_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'text', (c) => c.notNull())
    // The author as the audit log names actors: type, user id (null for the admin token), label.
    .addColumn('author_type', 'text', (c) => c.notNull())
    .addColumn('author_id', 'text')
    .addColumn('author_label', 'text', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('scheduled_at', 'text')
    // Who scheduled it: the actor the scheduled application is recorded under.
    .addColumn('scheduled_by', 'text')
    .addColumn('applied_at', 'text')
    .addColumn('applied_late', 'integer', (c) => c.notNull().defaultTo(0))
    // Why the last application was refused (a conflict), shown until the next one.
    .addColumn('failure', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('change_requests_project_idx').on('change_requests').columns(['project_id', 'status']).execute();
  await db.schema.createIndex('change_requests_due_idx').on('change_requests').columns(['status', 'scheduled_at']).execute();

  await db.schema
    .createTable('change_items')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('change_request_id', 'text', (c) => c.notNull().references('change_requests.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    // 'flag' (key = slug, in the request's environment) or 'segment' (key = segment key, project-wide).
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    // The version the change was based on; null for a segment that did not exist yet.
    .addColumn('base_version', 'integer')
    // JSON: the whole configuration after the change.
    .addColumn('config', 'text', (c) => c.notNull())
    .addUniqueConstraint('change_items_request_key_unique', ['change_request_id', 'kind', 'key'])
    .execute();

  await db.schema
    .createTable('change_approvals')
    .addColumn('change_request_id', 'text', (c) => c.notNull().references('change_requests.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('change_approvals_pk', ['change_request_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('change_comments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('change_request_id', 'text', (c) => c.notNull().references('change_requests.id').onDelete('cascade'))
    .addColumn('author_id', 'text')
    .addColumn('author_label', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('change_comments_request_idx').on('change_comments').columns(['change_request_id', 'created_at']).execute();

  // E-mails to reviewers and authors (issue 24), sent through SMTP_URL by the scheduler's rounds.
  await db.schema
    .createTable('change_notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('change_request_id', 'text', (c) => c.notNull().references('change_requests.id').onDelete('cascade'))
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
  await db.schema.createIndex('change_notifications_due_idx').on('change_notifications').columns(['status', 'next_attempt_at']).execute();
}
