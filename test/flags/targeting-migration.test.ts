import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, Migrator, sql } from 'kysely';
import { openDb } from '../../src/db/connect.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import { ADMIN_TOKEN, createTestDatabase, dialects, startInstance, type TestDatabase } from '../support/context.ts';

// Migration 0012 (issue 18) on a database written before it: existing flags become boolean flags whose
// default serve is their switch, and /v1 answers them byte for byte as before.

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-02T00:00:00.000Z';

async function seedBeforeTargeting(db: Kysely<unknown>): Promise<void> {
  await sql`insert into projects (id, key, name, created_at, updated_at) values ('p1', 'pk1', 'Shop', ${T0}, ${T0})`.execute(db);
  await sql`insert into environments (id, project_id, key, name, created_at, updated_at) values ('e1', 'p1', 'ek1', 'production', ${T0}, ${T0})`.execute(db);
  await sql`insert into environments (id, project_id, key, name, created_at, updated_at) values ('e2', 'p1', 'ek2', 'staging', ${T0}, ${T0})`.execute(db);
  const rows: Array<[string, string, string, number, string | null, string]> = [
    ['f1', 'e1', 'checkout', 1, '{"color":"blue"}', T0],
    ['f2', 'e2', 'checkout', 0, null, T0],
    ['f3', 'e1', 'banner', 0, '{"text":"hi"}', T1],
    ['f4', 'e2', 'banner', 1, null, T1],
  ];
  for (const [id, env, slug, enabled, payload, at] of rows) {
    await sql`insert into flags (id, project_id, environment_id, slug, enabled, payload, expired_at, description, is_preview, preview_name, preview_content, created_at, updated_at)
      values (${id}, 'p1', ${env}, ${slug}, ${enabled}, ${payload}, null, ${`about ${slug}`}, 0, null, null, ${at}, ${at})`.execute(db);
  }
}

for (const dialect of dialects()) {
  describe(`migration 0012_targeting on existing flags [${dialect}]`, () => {
    let database: TestDatabase;
    let instance: Awaited<ReturnType<typeof startInstance>>;

    before(async () => {
      database = await createTestDatabase(dialect);
      const handle = openDb({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.FLAGPOST_DATA_DIR!, poolSize: 1 });
      const schema = dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(handle.db)).rows[0]!.s : undefined;
      const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations }, migrationTableSchema: schema });
      const { error } = await migrator.migrateTo('0010_accounts');
      assert.equal(error, undefined);
      await seedBeforeTargeting(handle.db as unknown as Kysely<unknown>);
      await handle.close();
      instance = await startInstance(database);
    });
    after(async () => {
      await instance?.app.close();
      await instance?.services.stop();
      await instance?.handle.close();
      await database?.drop();
    });

    const read = (url: string, environmentKey: string) =>
      instance.app.inject({ method: 'GET', url, headers: { 'x-project-key': 'pk1', 'x-environment-key': environmentKey } });

    it('answers /v1 for the old rows byte for byte as the flag interface always did', async () => {
      const single = await read('/v1/flags/checkout', 'ek1');
      assert.equal(single.statusCode, 200);
      assert.equal(single.body, '{"slug":"checkout","enabled":true,"payload":{"color":"blue"},"expiredAt":null,"description":"about checkout"}');
      const list = await read('/v1/flags', 'ek2');
      assert.equal(
        list.body,
        '{"flags":[' +
          `{"slug":"banner","enabled":true,"payload":null,"expiredAt":null,"description":"about banner","createdAt":"${T1}","updatedAt":"${T1}"},` +
          `{"slug":"checkout","enabled":false,"payload":null,"expiredAt":null,"description":"about checkout","createdAt":"${T0}","updatedAt":"${T0}"}` +
          ']}',
      );
    });

    it('reads old rows back as boolean flags whose default variant is their switch', async () => {
      const res = await instance.app.inject({ method: 'GET', url: '/admin/v1/projects/pk1/flags', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(res.statusCode, 200, res.body);
      const byEnv = Object.fromEntries(
        res.json().flags.flatMap((f: { slug: string; environments: Array<Record<string, unknown>> }) => f.environments.map((e) => [`${f.slug}/${e.key}`, e])),
      );
      for (const [name, enabled] of [
        ['checkout/ek1', true],
        ['checkout/ek2', false],
        ['banner/ek1', false],
        ['banner/ek2', true],
      ] as const) {
        const flag = byEnv[name];
        assert.equal(flag.type, 'boolean', name);
        assert.equal(flag.enabled, enabled, name);
        assert.deepEqual(flag.variants, { on: true, off: false }, name);
        assert.equal(flag.defaultVariant, enabled ? 'on' : 'off', name);
        assert.equal(flag.state, 'ENABLED', name);
        assert.deepEqual(flag.rules, [], name);
        assert.deepEqual(flag.prerequisites, [], name);
      }
    });

    it('keeps the switch of an old flag working through the admin API', async () => {
      const res = await instance.app.inject({
        method: 'PATCH',
        url: '/admin/v1/projects/pk1/environments/ek1/flags/checkout',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ enabled: false }),
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().defaultVariant, 'off');
      const single = await read('/v1/flags/checkout', 'ek1');
      assert.equal(single.json().enabled, false);
    });
  });
}
