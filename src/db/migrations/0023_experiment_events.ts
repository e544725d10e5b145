import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen once landed. Experiments (issue 32, docs/adr/0044-event-storage.md): the raw events clients send
// to POST /v1/track and the exposures the OFREP read path records, the metrics of a project, the
// experiments of an environment, and the one rollup results need: an experiment's users with the variant
// and time of their first exposure (`experiment_users`), kept up to date as exposures are written.
//
// Event times are epoch milliseconds (bigint), not ISO text: results compare every tracked event with
// its user's first exposure plus a window, and integers compare and add in SQL on both engines. Event
// rows have no id: nothing names one, and a narrower row writes faster.
export async function up(db: Kysely<unknown>): Promise<void> {
  const real = db.getExecutor().adapter instanceof PostgresAdapter ? 'double precision' : 'real';
  await db.schema
    .createTable('exposures')
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('flag_key', 'text', (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('targeting_key', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('exposures_flag_idx').on('exposures').columns(['environment_id', 'flag_key', 'occurred_at']).execute();
  await db.schema.createIndex('exposures_time_idx').on('exposures').column('occurred_at').execute();

  await db.schema
    .createTable('tracked_events')
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('targeting_key', 'text', (c) => c.notNull())
    .addColumn('value', sql.raw(real))
    .addColumn('attributes', 'text')
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .execute();
  // Results look up one user's events of one name after their first exposure: (environment, name, user,
  // time), with the value, so that the index covers the read and no table row is visited.
  await db.schema
    .createIndex('tracked_events_user_idx')
    .on('tracked_events')
    .columns(['environment_id', 'name', 'targeting_key', 'occurred_at', 'value'])
    .execute();
  await db.schema.createIndex('tracked_events_time_idx').on('tracked_events').column('occurred_at').execute();

  await db.schema
    .createTable('metrics')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('denominator_event', 'text')
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('window_hours', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('metrics_project_key_unique', ['project_id', 'key'])
    .execute();

  await db.schema
    .createTable('experiments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('flag_key', 'text', (c) => c.notNull())
    .addColumn('rule_id', 'text')
    .addColumn('control_variant', 'text', (c) => c.notNull())
    .addColumn('metrics', 'text', (c) => c.notNull())
    .addColumn('guardrails', 'text', (c) => c.notNull())
    .addColumn('hypothesis', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    // The split as it was at start: the rule measured and its weights (SRM is checked against them).
    .addColumn('split', 'text')
    .addColumn('started_at', 'text')
    .addColumn('stopped_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('experiments_environment_key_unique', ['environment_id', 'key'])
    .execute();
  await db.schema.createIndex('experiments_running_idx').on('experiments').columns(['environment_id', 'status']).execute();

  await db.schema
    .createTable('experiment_users')
    .addColumn('experiment_id', 'text', (c) => c.notNull().references('experiments.id').onDelete('cascade'))
    .addColumn('targeting_key', 'text', (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('first_at', 'bigint', (c) => c.notNull())
    .addColumn('multiple', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('experiment_users_pk', ['experiment_id', 'targeting_key'])
    .execute();
  await db.schema.createIndex('experiment_users_key_idx').on('experiment_users').column('targeting_key').execute();
}
