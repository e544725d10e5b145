import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, Migrator, sql } from 'kysely';
import { openDb } from '../../src/db/connect.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { ADMIN_TOKEN, createTestDatabase, dialects, startInstance, type TestDatabase } from '../support/context.ts';

// Migration 0028 (issue 34) on submissions stored before it: they are indexed with the rule new ones get,
// so that the server-side search finds them too, and they are forgotten when they go.

const T0 = '2026-11-01T00:00:00.000Z';
const ROWS = 1203; // more than two of the migration's batches of 500

async function seed(db: Kysely<unknown>): Promise<void> {
  await sql`insert into forms (id, key, name, created_at, updated_at) values ('f1', 'oldformkey000001', 'Old', ${T0}, ${T0})`.execute(db);
  for (let i = 0; i < ROWS; i++) {
    const data = i === 7 ? { name: 'Zoë Müller', topic: ['sales', 'support'], n: i } : { message: `filler ${i}`, n: i };
    await sql`insert into submissions (id, form_id, data, spam, created_at) values (${`s${String(i).padStart(5, '0')}`}, 'f1', ${JSON.stringify(data)}, 0, ${T0})`.execute(
      db,
    );
  }
}

for (const dialect of dialects()) {
  describe(`migration 0028_form_search_tokens_analytics on existing submissions [${dialect}]`, () => {
    let database: TestDatabase;
    let instance: Awaited<ReturnType<typeof startInstance>>;
    const admin = (method: 'GET' | 'DELETE', url: string) => instance.app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const found = async (query: string) => {
      const res = await admin('GET', `/admin/v1/forms/oldformkey000001/submissions${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return (res.json().submissions as Array<{ id: string }>).map((s) => s.id);
    };

    before(async () => {
      database = await createTestDatabase(dialect);
      const handle = openDb({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.FLAGPOST_DATA_DIR!, poolSize: 1 });
      const schema = dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(handle.db)).rows[0]!.s : undefined;
      const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema });
      const { error } = await migrator.migrateTo('0027_form_mail');
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

    it('indexes every existing submission, so that the search finds old ones and forgets deleted ones', async () => {
      assert.deepEqual(await found('?q=zoe%20muller'), ['s00007']);
      assert.deepEqual(await found('?q=support'), ['s00007']);
      assert.deepEqual(await found('?q=filler%201202'), ['s01202']);
      assert.deepEqual(await found('?q=filler%20500'), ['s00500']);
      assert.deepEqual(await found('?field.topic=sales'), ['s00007']);
      assert.equal((await admin('DELETE', '/admin/v1/forms/oldformkey000001/submissions/s00007')).statusCode, 204);
      assert.deepEqual(await found('?q=zoe'), []);
    });
  });
}
