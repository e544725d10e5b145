import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ADMIN_TOKEN, createTestDatabase, dialects, startInstance, type TestContext, forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

// Issue 23, flag usage: exact counts per surface (the Fastify routes and the fast path on a real
// socket, the flagd sync service), counts that survive a restart, two PostgreSQL instances adding to
// the same buckets, and the stale-flag rule "not evaluated for N days" firing by the clock port.

const DAY_MS = 86_400_000;
const REF = { filePath: 'src/a.ts', lineNumber: 1, lineContent: "isOn('read-often')" };
const PROTO = path.resolve(import.meta.dirname, '../../src/flagd-sync/flagd-sync.proto');
const loaded = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO, { defaults: true })) as unknown as {
  flagd: { sync: { v1: { FlagSyncService: grpc.ServiceClientConstructor } } };
};

interface UsageAnswer {
  flags: Array<{ slug: string; evaluations: number; lastEvaluatedAt: string | null; environments: Array<{ key: string; evaluations: number }> }>;
}

const usageOf = async (ctx: TestContext, projectKey: string): Promise<Map<string, number>> => {
  const res = await ctx.admin('GET', `/admin/v1/projects/${projectKey}/usage?days=7`);
  assert.equal(res.statusCode, 200, res.body);
  return new Map((res.json() as UsageAnswer).flags.map((f) => [f.slug, f.evaluations]));
};

async function listening(ctx: TestContext): Promise<string> {
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const address = ctx.app.server.address() as { port: number };
  return `http://127.0.0.1:${address.port}`;
}

forEachDialect(
  'flag usage counting',
  (ctx) => {
    let project: ProjectFixture;
    let base: string;
    before(async () => {
      project = await createProject(ctx(), 'Usage');
      await createFlag(ctx(), project.key, { slug: 'alpha', enabled: true });
      await createFlag(ctx(), project.key, { slug: 'beta', enabled: false });
      await createFlag(ctx(), project.key, { slug: 'gamma', enabled: true });
      base = await listening(ctx());
    });

    it('counts every evaluation of each surface exactly, through the routes and the fast path, and writes only on flush', async () => {
      const h = keys(project);
      const inject = (method: 'GET' | 'POST', url: string, body?: unknown) =>
        ctx().app.inject({
          method,
          url,
          headers: { ...h, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          payload: body === undefined ? undefined : JSON.stringify(body),
        });
      const socket = (method: 'GET' | 'POST', url: string, body?: unknown) =>
        fetch(`${base}${url}`, {
          method,
          headers: { ...h, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      // Routes (inject does not go through the fast path's server): 3 single /v1, 2 lists, 4 OFREP singles, 1 bulk.
      for (let i = 0; i < 3; i++) assert.equal((await inject('GET', '/v1/flags/alpha')).statusCode, 200);
      for (let i = 0; i < 2; i++) assert.equal((await inject('GET', '/v1/flags')).statusCode, 200);
      for (let i = 0; i < 4; i++) assert.equal((await inject('POST', '/ofrep/v1/evaluate/flags/beta', { context: {} })).statusCode, 200);
      assert.equal((await inject('POST', '/ofrep/v1/evaluate/flags', { context: {} })).statusCode, 200);
      // The fast path (warm snapshot, real socket): 5 single /v1, 1 list, 2 OFREP singles (one of a payload key), 2 bulks.
      for (let i = 0; i < 5; i++) assert.equal((await socket('GET', '/v1/flags/gamma')).status, 200);
      assert.equal((await socket('GET', '/v1/flags')).status, 200);
      assert.equal((await socket('POST', '/ofrep/v1/evaluate/flags/alpha', { context: {} })).status, 200);
      assert.equal((await socket('POST', '/ofrep/v1/evaluate/flags/alpha:payload', { context: {} })).status, 200);
      for (let i = 0; i < 2; i++) assert.equal((await socket('POST', '/ofrep/v1/evaluate/flags', {})).status, 200);
      // Not evaluations: an unknown flag, unknown keys, a body that is not JSON.
      assert.equal((await socket('GET', '/v1/flags/nope')).status, 404);
      assert.equal((await inject('POST', '/ofrep/v1/evaluate/flags/nope', {})).statusCode, 404);

      const before = await usageOf(ctx(), project.key);
      assert.deepEqual([...before.values()], [0, 0, 0], 'nothing is written before a flush');
      await ctx().services.usage.flush();
      const counts = await usageOf(ctx(), project.key);
      // alpha: 3 single + 3 lists + 3 bulks + 2 OFREP; beta: 3 lists + 3 bulks + 4 OFREP; gamma: 5 single + 3 lists + 3 bulks.
      assert.deepEqual(Object.fromEntries(counts), { alpha: 11, beta: 10, gamma: 11 });
      const order = (await ctx().admin('GET', `/admin/v1/projects/${project.key}/usage`)).json() as UsageAnswer;
      assert.deepEqual(
        order.flags.map((f) => f.slug),
        ['alpha', 'gamma', 'beta'],
        'most evaluated first, ties by slug',
      );
      assert.deepEqual(
        order.flags[0]!.environments,
        project.environments.map((env, i) => ({ key: env.key, evaluations: i === 0 ? 11 : 0 })),
      );
    });

    it('answers lastEvaluatedAt per flag and environment in the flag listing, and a per-day series', async () => {
      const flags = (await ctx().admin('GET', `/admin/v1/projects/${project.key}/flags`)).json() as {
        flags: Array<{ slug: string; environments: Array<{ key: string; lastEvaluatedAt: string | null }> }>;
      };
      const alpha = flags.flags.find((f) => f.slug === 'alpha')!;
      assert.match(alpha.environments[0]!.lastEvaluatedAt ?? '', /^\d{4}-\d\d-\d\dT/);
      assert.equal(alpha.environments[1]!.lastEvaluatedAt, null, 'never read in the second environment');
      const series = await ctx().admin('GET', `/admin/v1/projects/${project.key}/flags/alpha/usage?days=3`);
      assert.equal(series.statusCode, 200, series.body);
      const body = series.json();
      assert.equal(body.days.length, 3);
      assert.deepEqual(body.environments[0].evaluations, [0, 0, 11]);
      assert.equal(body.environments[0].lastEvaluatedAt, alpha.environments[0]!.lastEvaluatedAt);
      assert.equal((await ctx().admin('GET', `/admin/v1/projects/${project.key}/flags/nope/usage`)).statusCode, 404);
      assert.equal((await ctx().admin('GET', `/admin/v1/projects/${project.key}/usage?days=0`)).statusCode, 400);
      assert.equal((await ctx().admin('GET', `/admin/v1/projects/${project.key}/usage?days=x`)).statusCode, 400);
    });

    it('counts a flagd sync delivery as one evaluation of every flag in it', async () => {
      const envKey = project.environments[1]!.key;
      const created = await ctx().admin('POST', `/admin/v1/projects/${project.key}/environments/${envKey}/flagd-sync-token`);
      assert.equal(created.statusCode, 201, created.body);
      const selector = created.json().selector as string;
      const unknownSynced = () =>
        ctx()
          .services.reads.usage.evaluationCounts()
          .find((c) => c.surface === 'flagd_sync' && c.reason === 'UNKNOWN')!.count;
      const syncedBefore = unknownSynced();
      const port = await ctx().services.flagdSyncServer.listen('127.0.0.1', 0);
      const client = new loaded.flagd.sync.v1.FlagSyncService(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
        FetchAllFlags(req: unknown, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, r: { flagConfiguration: string }) => void): void;
      };
      for (let i = 0; i < 2; i++) {
        await new Promise<void>((resolve, reject) => {
          const md = new grpc.Metadata();
          md.set('flagd-selector', selector);
          client.FetchAllFlags({ selector }, md, (error) => (error ? reject(error) : resolve()));
        });
      }
      client.close();
      // The metrics count them too, with reason UNKNOWN: flagd evaluates them, out of Flagpost's sight.
      assert.equal(unknownSynced() - syncedBefore, 2 * 3);
      await ctx().services.usage.flush();
      const res = (await ctx().admin('GET', `/admin/v1/projects/${project.key}/usage`)).json() as UsageAnswer;
      for (const flag of res.flags) assert.equal(flag.environments[1]!.evaluations, 2, flag.slug);
    });

    it("forgets a deleted flag's usage", async () => {
      await ctx().app.inject({ method: 'GET', url: '/v1/flags/beta', headers: keys(project) });
      assert.equal((await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/flags/beta`)).statusCode, 204);
      await ctx().services.usage.flush();
      await createFlag(ctx(), project.key, { slug: 'beta' });
      assert.equal((await usageOf(ctx(), project.key)).get('beta'), 0);
    });
  },
  { FLAGPOST_USAGE_FLUSH_MS: '0' },
);

for (const dialect of dialects()) {
  describe(`flag usage across restarts and instances [${dialect}]`, () => {
    it('keeps the counts flushed at shutdown for the next start', async () => {
      const database = await createTestDatabase(dialect);
      try {
        const env = { FLAGPOST_USAGE_FLUSH_MS: '0' };
        const first = await startInstance(database, env);
        const admin = (instance: typeof first, method: 'GET' | 'POST', url: string, body?: unknown) =>
          instance.app.inject({
            method,
            url,
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
            payload: body === undefined ? undefined : JSON.stringify(body),
          });
        const project = (await admin(first, 'POST', '/admin/v1/projects', { name: 'Restart' })).json() as ProjectFixture;
        assert.equal((await admin(first, 'POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'kept' })).statusCode, 201);
        for (let i = 0; i < 7; i++) await first.app.inject({ method: 'GET', url: '/v1/flags/kept', headers: keys(project) });
        await first.app.close();
        await first.services.stop();
        await first.handle.close();

        const second = await startInstance(database, env);
        try {
          const usage = (await admin(second, 'GET', `/admin/v1/projects/${project.key}/usage`)).json() as UsageAnswer;
          assert.equal(usage.flags[0]!.evaluations, 7);
        } finally {
          await second.app.close();
          await second.services.stop();
          await second.handle.close();
        }
      } finally {
        await database.drop();
      }
    });

    it('adds the counts of two instances flushing the same buckets at once', { skip: dialect !== 'postgres' && 'PostgreSQL only' }, async () => {
      const database = await createTestDatabase(dialect);
      const env = { FLAGPOST_USAGE_FLUSH_MS: '0' };
      const a = await startInstance(database, env);
      const b = await startInstance(database, env);
      try {
        const admin = (method: 'GET' | 'POST', url: string, body?: unknown) =>
          a.app.inject({
            method,
            url,
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
            payload: body === undefined ? undefined : JSON.stringify(body),
          });
        const project = (await admin('POST', '/admin/v1/projects', { name: 'Two' })).json() as ProjectFixture;
        for (const slug of ['one', 'two', 'three']) assert.equal((await admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug })).statusCode, 201);
        for (let round = 0; round < 5; round++) {
          for (let i = 0; i < 10; i++) {
            await a.app.inject({ method: 'GET', url: '/v1/flags/one', headers: keys(project) });
            await b.app.inject({ method: 'GET', url: '/v1/flags/one', headers: keys(project) });
            await b.app.inject({ method: 'GET', url: '/v1/flags', headers: keys(project) });
          }
          await Promise.all([a.services.usage.flush(), b.services.usage.flush()]);
        }
        const usage = new Map(
          ((await admin('GET', `/admin/v1/projects/${project.key}/usage`)).json() as UsageAnswer).flags.map((f) => [f.slug, f.evaluations]),
        );
        assert.deepEqual(Object.fromEntries(usage), { one: 150, two: 50, three: 50 });
      } finally {
        for (const instance of [a, b]) {
          await instance.app.close();
          await instance.services.stop();
          await instance.handle.close();
        }
        await database.drop();
      }
    });
  });
}

describe('the stale-flag rule "not evaluated for N days"', () => {
  let offsetMs = 0;
  const clock = () => new Date(Date.now() + offsetMs);
  forEachDialect(
    'not_evaluated',
    (ctx) => {
      let project: ProjectFixture;
      const report = async (query = '') => {
        const res = await ctx().admin('GET', `/admin/v1/projects/${project.key}/stale-flags${query}`);
        assert.equal(res.statusCode, 200, res.body);
        return res.json() as {
          usageCountedSince: string | null;
          flags: Array<{ slug: string; rules: string[]; removable: boolean; lastEvaluatedAt: string | null }>;
        };
      };
      const rulesOf = (body: Awaited<ReturnType<typeof report>>, slug: string) => body.flags.find((f) => f.slug === slug)?.rules ?? [];

      before(async () => {
        offsetMs = 0;
        project = await createProject(ctx(), 'Stale');
        await createFlag(ctx(), project.key, { slug: 'read-often' });
        await createFlag(ctx(), project.key, { slug: 'never-read' });
      });
      after(() => {
        offsetMs = 0;
      });

      it('fires once a flag went unread in every environment for N days, by the clock, and marks it removable when no code references it', async () => {
        await ctx().app.inject({ method: 'GET', url: '/v1/flags/read-often', headers: keys(project, 1) });
        await ctx().services.usage.flush();
        let body = await report('?days=3650');
        assert.ok(body.usageCountedSince);
        assert.deepEqual(rulesOf(body, 'never-read'), [], 'counting began less than 30 days ago');

        offsetMs = 31 * DAY_MS;
        body = await report('?days=3650');
        assert.deepEqual(rulesOf(body, 'never-read'), ['not_evaluated']);
        assert.deepEqual(rulesOf(body, 'read-often'), ['not_evaluated'], 'its last evaluation is 31 days old');
        assert.ok(body.flags.find((f) => f.slug === 'read-often')!.lastEvaluatedAt);
        assert.deepEqual(rulesOf(await report('?days=3650&unevaluatedDays=40'), 'never-read'), [], 'N is the query parameter');

        // Read again "today" (the clock's): only the unread flag stays.
        await ctx().app.inject({ method: 'GET', url: '/v1/flags/read-often', headers: keys(project, 0) });
        await ctx().services.usage.flush();
        body = await report('?days=3650');
        assert.deepEqual(rulesOf(body, 'read-often'), []);
        assert.equal(body.flags.find((f) => f.slug === 'never-read')!.removable, false, 'no code references were uploaded yet');

        // Combined with the code-reference rules: unreferenced and unread is removable.
        const key = (await ctx().admin('POST', `/admin/v1/projects/${project.key}/api-keys`, { name: 'ci' })).json().token as string;
        const upload = await ctx().app.inject({
          method: 'POST',
          url: '/v1/flags/code-refs',
          headers: { ...keys(project), 'x-api-key': key, 'content-type': 'application/json' },
          payload: JSON.stringify({ branch: 'main', projectName: 'web', references: { 'read-often': [REF] } }),
        });
        assert.equal(upload.statusCode, 201, upload.body);
        body = await report('?days=3650');
        const neverRead = body.flags.find((f) => f.slug === 'never-read')!;
        assert.deepEqual(neverRead.rules, ['unreferenced', 'not_evaluated']);
        assert.equal(neverRead.removable, true);
      });
    },
    { FLAGPOST_USAGE_FLUSH_MS: '0' },
    { clock },
  );
});
