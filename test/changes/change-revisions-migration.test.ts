import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, Migrator, sql } from 'kysely';
import { openDb } from '../../src/db/connect.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { createTestDatabase, dialects, startInstance, type TestDatabase } from '../support/context.ts';

// Migration 0021 (issue 29 item 1) on change requests written before it: each gets its first revision by
// its author, and each later edit the audit log holds counts as a revision of its current one by that
// edit's actor, so that nobody who edited a request before the migration approves it after.

const T0 = '2026-01-01T00:00:00.000Z';

async function seed(db: Kysely<unknown>): Promise<void> {
  await sql`insert into projects (id, key, name, created_at, updated_at) values ('p1', 'pk1', 'Shop', ${T0}, ${T0})`.execute(db);
  await sql`insert into environments (id, project_id, key, name, created_at, updated_at) values ('e1', 'p1', 'ek1', 'production', ${T0}, ${T0})`.execute(db);
  for (const [id, revision] of [
    ['cr1', 1],
    ['cr2', 3],
  ] as const) {
    await sql`insert into change_requests (id, project_id, environment_id, title, status, author_type, author_id, author_label, revision, created_at, updated_at)
      values (${id}, 'p1', 'e1', 'Launch', 'in_review', 'user', 'ann', 'ann@example.com', ${revision}, ${T0}, ${T0})`.execute(db);
  }
  const entries: Array<[string, string, string, string]> = [
    ['a1', 'cr2', 'bob', 'change_request.updated'],
    ['a2', 'cr2', 'cy', 'change_request.updated'],
    ['a3', 'cr2', 'dee', 'change_request.approved'],
    ['a4', 'cr1', 'eve', 'change_request.commented'],
  ];
  for (const [id, request, actor, action] of entries) {
    await sql`insert into audit_log (id, created_at, actor_type, actor_id, actor_label, project_id, entity, entity_id, environment_key, action, changes)
      values (${id}, ${T0}, 'user', ${actor}, ${`${actor}@example.com`}, 'p1', 'change_request', ${request}, 'ek1', ${action}, '{}')`.execute(db);
  }
}

for (const dialect of dialects()) {
  describe(`migration 0021_change_request_revisions on existing requests [${dialect}]`, () => {
    let database: TestDatabase;
    let instance: Awaited<ReturnType<typeof startInstance>>;

    before(async () => {
      database = await createTestDatabase(dialect);
      const handle = openDb({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.FLAGPOST_DATA_DIR!, poolSize: 1 });
      const schema = dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(handle.db)).rows[0]!.s : undefined;
      const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema });
      const { error } = await migrator.migrateTo('0020_change_request_origin');
      assert.equal(error, undefined);
      await seed(handle.db as unknown as Kysely<unknown>);
      await handle.close();
      instance = await startInstance(database);
    });
    after(async () => {
      await instance?.app.close();
      await instance?.services.stop();
      await instance?.handle.close();
      await database?.drop();
    });

    it('gives each request its first revision by its author, and its audited editors the current one', async () => {
      const views = instance.services.changeViews;
      const revisions = async (id: string) => {
        const { project, record } = await views.find('pk1', id);
        return (await views.viewOf(project, record)).revisions;
      };
      assert.deepEqual(await revisions('cr1'), [{ revision: 1, author: 'ann@example.com', approvalsReset: false }]);
      assert.deepEqual(
        (await revisions('cr2')).map((r) => [r.revision, r.author]).sort(),
        [
          [1, 'ann@example.com'],
          [3, 'bob@example.com'],
          [3, 'cy@example.com'],
        ],
        'edits only: approvals and comments are not revisions',
      );
    });
  });
}
