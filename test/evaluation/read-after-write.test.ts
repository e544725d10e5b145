import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { Flag } from '../../src/flags/flag.ts';
import { type EnvironmentFlags, FlagReadModel } from '../../src/evaluation/flag.read-model.ts';
import { ADMIN_TOKEN, createTestContext, createTestDatabase, dialects, startInstance, type TestContext } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

// Read-your-writes on one instance (issue 18): once an admin write has answered, every read of the
// same instance shows it, whichever way it is answered (the /v1 routes, the fast path, OFREP single
// and bulk). The dangerous case is a load of the environment that began before the write committed
// and is still under way when the write answers: it holds the old flags, and must be neither kept nor
// handed to a read that starts after the write's answer. The first suite shows it on the read model
// itself, step by step; the second over HTTP, under CPU load, with concurrent writers and readers. On
// PostgreSQL a load's query and a write's commit run on different connections, and a slow link to the
// database makes such overlaps common. On SQLite, statements run one at a time on one connection, so
// a load hardly ever overlaps a commit there; the suite runs there all the same.

const flag = (slug: string, enabled: boolean): Flag => ({
  id: `id-${slug}`,
  version: 1,
  projectId: 'p',
  environmentId: 'e1',
  slug,
  enabled,
  type: 'boolean',
  targeting: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: enabled ? 'on' : 'off', prerequisites: [], rules: [] },
  payload: null,
  expiredAt: null,
  description: '',
  isPreview: false,
  previewName: null,
  previewContent: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

/** A source whose loads wait until the test releases them, each with the flags as they were when it began. */
function heldSource() {
  let enabled = false;
  const held: Array<() => void> = [];
  return {
    set(value: boolean) {
      enabled = value;
    },
    /** Lets the oldest load still held end. */
    releaseOldest() {
      held.shift()?.();
    },
    source: {
      loadEnvironment(): Promise<EnvironmentFlags> {
        const seen = enabled;
        return new Promise((resolve) => held.push(() => resolve({ environmentId: 'e1', flags: [flag('a', seen)], segments: [] })));
      },
    },
  };
}

const enabledIn = (snapshot: Awaited<ReturnType<FlagReadModel['get']>>) => JSON.parse(snapshot!.v1.single.get('a')!.body).enabled as boolean;

describe('FlagReadModel: a load that began before a change', () => {
  it('is not handed to a read that starts after the change', async () => {
    const held = heldSource();
    const model = new FlagReadModel(held.source);
    const early = model.get('p', 'e');
    held.set(true);
    model.apply({ kind: 'environment', environmentId: 'e1' });
    const late = model.get('p', 'e');
    held.releaseOldest();
    assert.equal(enabledIn(await early), false, 'a read that began before the change may see the old flags');
    held.releaseOldest();
    assert.equal(enabledIn(await late), true, 'a read that began after the change sees it');
    assert.equal(enabledIn(model.get('p', 'e') as Awaited<ReturnType<FlagReadModel['get']>>), true, 'and the kept snapshot is the new one');
  });

  it('is not handed to the watchers told of the change (the event streams, which announce the new ETag)', async () => {
    const held = heldSource();
    const model = new FlagReadModel(held.source);
    const told: Array<ReturnType<FlagReadModel['get']>> = [];
    model.watch(() => told.push(model.get('p', 'e')));
    const early = model.get('p', 'e');
    held.set(true);
    model.apply({ kind: 'environment', environmentId: 'e1' });
    held.releaseOldest();
    held.releaseOldest();
    assert.equal(enabledIn(await early), false);
    assert.equal(told.length, 1);
    assert.equal(enabledIn(await told[0]), true);
  });

  it('is not handed to a read that starts after the keys changed (a project created meanwhile)', async () => {
    let exists = false;
    const held: Array<() => void> = [];
    const model = new FlagReadModel({
      loadEnvironment() {
        const seen = exists;
        return new Promise((resolve) => held.push(() => resolve(seen ? { environmentId: 'e1', flags: [], segments: [] } : undefined)));
      },
    });
    const early = model.get('p', 'e');
    exists = true;
    model.apply({ kind: 'keys' });
    const late = model.get('p', 'e');
    for (const release of held.splice(0)) release();
    assert.equal(await early, undefined);
    for (const release of held.splice(0)) release();
    assert.ok(await late, 'the new keys are known to a read after the change');
  });

  it('leaves the load started after the change to be shared by the reads that follow', async () => {
    let loads = 0;
    const held = heldSource();
    const model = new FlagReadModel({
      loadEnvironment() {
        loads++;
        return held.source.loadEnvironment();
      },
    });
    const early = model.get('p', 'e');
    model.apply({ kind: 'environment', environmentId: 'e1' });
    const late = model.get('p', 'e');
    // The old load ends first; it must not take the new one out of the shared loads.
    held.releaseOldest();
    await early;
    const later = model.get('p', 'e');
    held.releaseOldest();
    held.releaseOldest();
    await Promise.all([late, later]);
    assert.equal(loads, 2, 'one load before the change, one shared by both reads after it');
  });
});

/** Busy threads for the length of a suite: the instance answers while competing for the CPU. */
function cpuLoad(threads: number): () => Promise<void> {
  const workers = Array.from({ length: threads }, () => new Worker('for (;;) {}', { eval: true }));
  return async () => {
    await Promise.all(workers.map((w) => w.terminate()));
  };
}

/** A chunk from the database at least this large is part of a large answer (an environment's flags). */
const LARGE_CHUNK = 4096;

/**
 * A link to PostgreSQL on which large answers arrive late, as over a slow network: a chunk of
 * LARGE_CHUNK bytes or more from the database, and whatever follows it on its connection, is passed on
 * `delayMs` later; small answers (those of a write's statements) pass at once. A load of a large
 * environment then runs its query, sees the flags as they are, and is still under way for `delayMs`,
 * during which writes commit and answer: the case this suite is about, made common instead of rare.
 */
async function slowLink(targetPort: number, targetHost: string, delayMs: number) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    // In order, each chunk no sooner than its time.
    const queue: Array<{ chunk: Buffer; at: number }> = [];
    let timer: NodeJS.Timeout | undefined;
    const pump = () => {
      timer = undefined;
      const now = performance.now();
      while (queue.length > 0 && queue[0]!.at <= now) client.write(queue.shift()!.chunk);
      if (queue.length > 0) timer = setTimeout(pump, queue[0]!.at - now);
    };
    upstream.on('data', (chunk: Buffer) => {
      const now = performance.now();
      queue.push({ chunk, at: Math.max(queue.at(-1)?.at ?? 0, chunk.length >= LARGE_CHUNK ? now + delayMs : now) });
      if (!timer) pump();
    });
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The real app on a fresh database; on PostgreSQL, reached through a slow link. Flag reads are not
 * rate limited here: the suite sends many.
 */
async function startApp(dialect: TestContext['dialect']): Promise<{ ctx: TestContext; stopLink: () => Promise<void> }> {
  const env = { FLAGPOST_RATE_LIMIT_MAX: '0' };
  if (dialect === 'sqlite') return { ctx: await createTestContext(dialect, env), stopLink: async () => {} };
  const database = await createTestDatabase(dialect);
  const url = new URL(database.env.DATABASE_URL!);
  const link = await slowLink(Number(url.port || 5432), url.hostname, LINK_DELAY_MS);
  url.hostname = '127.0.0.1';
  url.port = String(link.port);
  const { config, handle, services, app } = await startInstance(database, { ...env, DATABASE_URL: url.toString() });
  const ctx: TestContext = {
    dialect,
    app,
    services,
    config,
    handle,
    database,
    admin: (method, path, body) =>
      app.inject({
        method,
        url: path,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        payload: body === undefined ? undefined : JSON.stringify(body),
      }),
    async close() {
      await app.close();
      await services.stop();
      await handle.close();
      await database.drop();
    },
  };
  return { ctx, stopLink: () => link.close() };
}

/**
 * Writers, each the only one to change its own flag of the environment, in rounds: a write, then every
 * read of that flag straight after its answer. Every write empties the environment's snapshot, so the
 * reads of the others start loads at any moment, and some of these are under way while another
 * writer's write commits: the dangerous case.
 */
const WRITERS = 4;
/** Readers of the whole environment all along. */
const READERS = 2;
/** Rounds per writer at most, and the time they may take: a busy machine runs fewer, never less than MIN_ROUNDS. */
const ROUNDS = 100;
const MIN_ROUNDS = 10;
const BUDGET_MS = 15_000;
/** Flags with a large payload, which make the environment's flags a large answer. */
const LARGE_FLAGS = 8;
const FILLER = 'x'.repeat(10_000);
/** How late a large answer of PostgreSQL arrives. */
const LINK_DELAY_MS = 150;

for (const dialect of dialects()) {
  describe(`read after write under CPU load on a real socket [${dialect}]`, () => {
    let ctx: TestContext;
    let base: string;
    let project: ProjectFixture;
    let stopLoad: (() => Promise<void>) | undefined;
    let stopLink: (() => Promise<void>) | undefined;
    const slugs = Array.from({ length: WRITERS }, (_, w) => `flag-${w}`);

    before(async () => {
      ({ ctx, stopLink } = await startApp(dialect));
      await ctx.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
      project = await createProject(ctx);
      for (const slug of slugs) await createFlag(ctx, project.key, { slug, description: `Written by one writer of the test only` });
      for (let i = 0; i < LARGE_FLAGS; i++) {
        await createFlag(ctx, project.key, { slug: `large-${i}` });
        const res = await ctx.admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/large-${i}`, {
          payload: { filler: FILLER },
        });
        assert.equal(res.statusCode, 200, res.body);
      }
    });
    after(async () => {
      await stopLoad?.();
      await ctx?.close();
      await stopLink?.();
    });

    const patch = async (slug: string, body: unknown) => {
      const res = await fetch(`${base}/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/${slug}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 200, await res.text());
    };
    const read = async (method: 'GET' | 'POST', path: string) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { ...keys(project), ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
        body: method === 'POST' ? '{"context":{}}' : undefined,
      });
      const text = await res.text();
      assert.equal(res.status, 200, `${method} ${path}: ${text}`);
      return JSON.parse(text);
    };

    /** The round each flag's payload carries (0: none yet). */
    type Rounds = Map<string, number>;
    const roundOf = (payload: { round?: number } | null | undefined) => payload?.round ?? 0;
    /** Every way a client reads flags: each gives the rounds of the flags it shows. */
    const reads: Record<string, (slug: string) => Promise<Rounds>> = {
      'GET /v1/flags/<slug>': async (slug) => new Map([[slug, roundOf((await read('GET', `/v1/flags/${slug}`)).payload)]]),
      'GET /v1/flags': async () => new Map((await read('GET', '/v1/flags')).flags.map((f: { slug: string; payload: null }) => [f.slug, roundOf(f.payload)])),
      'OFREP single <slug>:payload': async (slug) => new Map([[slug, roundOf((await read('POST', `/ofrep/v1/evaluate/flags/${slug}:payload`)).value)]]),
      'OFREP single <slug>': async (slug) => {
        const payload = (await read('POST', `/ofrep/v1/evaluate/flags/${slug}`)).metadata?.payload;
        return new Map([[slug, payload === undefined ? 0 : roundOf(JSON.parse(payload))]]);
      },
      'OFREP bulk': async () =>
        new Map(
          (await read('POST', '/ofrep/v1/evaluate/flags')).flags
            .filter((f: { key: string }) => f.key.endsWith(':payload'))
            .map((f: { key: string; value?: { round?: number } }) => [f.key.slice(0, -':payload'.length), roundOf(f.value)]),
        ),
    };
    const names = Object.keys(reads);

    it(
      'shows every committed write to every read that starts after its answer, while loads that began before it are under way',
      { timeout: 180_000 },
      async (t) => {
        stopLoad = cpuLoad(1);
        /** Per flag, the round of its newest write whose answer has been received. */
        const answered = new Map(slugs.map((slug) => [slug, 0]));
        let done = false;
        const stale: string[] = [];
        const failures: unknown[] = [];
        let checked = 0;
        /** Reads once; every flag shown must be at least at the round answered before the read started. */
        const check = async (name: string, slug: string, who: string, exact?: number) => {
          const floor = new Map(answered);
          const rounds = await reads[name]!(slug);
          checked++;
          for (const [shown, round] of rounds) {
            const expected = shown === slug && exact !== undefined ? exact : floor.get(shown);
            if (expected !== undefined && round < expected)
              stale.push(`${name} (${who}) showed ${shown} at round ${round} after round ${expected} had answered`);
          }
        };
        const failed = (error: unknown) => {
          failures.push(error);
          done = true;
        };

        const started = performance.now();
        const inTime = (round: number) => round <= ROUNDS && !done && stale.length === 0 && (round <= MIN_ROUNDS || performance.now() - started < BUDGET_MS);
        const writers = slugs.map(async (slug, w) => {
          let round = 1;
          for (; inTime(round); round++) {
            await patch(slug, { enabled: round % 2 === 1, payload: { round } });
            answered.set(slug, round);
            // Straight after the answer, every read of the flag, the first one again at the end.
            for (const name of [...names, names[0]!]) await check(name, slug, `writer ${w}, right after its write`, round);
          }
          return round - 1;
        });
        const readers = Array.from({ length: READERS }, async (_, r) => {
          for (let i = r; !done; i++) await check(names[i % names.length]!, slugs[i % slugs.length]!, 'a reader all along');
        });
        let rounds: number[];
        try {
          rounds = await Promise.all(writers.map((w) => w.catch((error: unknown) => (failed(error), 0))));
        } finally {
          done = true;
          await Promise.all(readers.map((r) => r.catch(failed)));
        }
        t.diagnostic(`${rounds.join(' + ')} rounds, ${checked} reads checked in ${Math.round(performance.now() - started)} ms`);
        assert.deepEqual(failures, []);
        assert.deepEqual(stale.slice(0, 5), [], `${stale.length} stale reads of ${checked}`);
        for (const n of rounds) assert.ok(n >= MIN_ROUNDS, `${n} rounds`);
      },
    );
  });
}
