import { type Migration, type MigrationProvider, Migrator, PostgresAdapter, sql } from 'kysely';
import type { Db } from './database.ts';
import { migrations } from './migrations/index.ts';

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

const ATTEMPTS = 5;

/**
 * Brings the schema up to date, safely when several instances start at once. On PostgreSQL Kysely's
 * migrator holds an advisory lock so one instance migrates while the others wait. On
 * SQLite it has no cross-connection lock: two starters can both see a pending migration, and the
 * loser's transaction fails and rolls back whole (SQLite DDL is transactional). So a failed run is
 * retried, and counts as success once another instance has applied every migration.
 */
export async function migrateToLatest(db: Db): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: new StaticMigrationProvider(),
    // Kysely looks for its bookkeeping tables in every schema unless told which one; name the current
    // schema so that another schema of the same database (another deployment, a test) is never taken
    // for this one's.
    migrationTableSchema: await currentPostgresSchema(db),
  });
  let lastError: unknown;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    const failed = results?.find((r) => r.status === 'Error');
    if (!error && !failed) return;
    lastError = new Error(`Migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error ?? 'unknown error')}`);
    await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    const pending = (await migrator.getMigrations()).filter((m) => m.executedAt === undefined);
    if (pending.length === 0) return;
  }
  throw lastError;
}

/** The first schema of the search_path on PostgreSQL; undefined on SQLite. */
async function currentPostgresSchema(db: Db): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined;
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? undefined;
}
