import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { compose } from '../src/compose.ts';
import { loadConfig } from '../src/config.ts';
import { openDb } from '../src/db/connect.ts';
import { migrateToLatest } from '../src/db/migrate.ts';

// npm run bench:experiment-results (issue 32): the results of one experiment over EVENTS events of USERS
// users, stored through the real write path (EventService.track in batches of 1,000), read through
// ResultsService with three metrics (proportion, mean, ratio). SQLite by default; PostgreSQL with
// DATABASE_URL (a fresh schema is made and dropped). Prints the time of each results read and the
// largest pause of the event loop during one (SQLite reads in chunks so that flag reads go on).

const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const READS = 3;

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-results-'));
  let databaseUrl = process.env.DATABASE_URL;
  let dropSchema: (() => Promise<void>) | undefined;
  if (databaseUrl) {
    const pg = (await import('pg')).default;
    const schema = `bench_${Date.now().toString(36)}`;
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`create schema ${schema}`);
    await client.end();
    const url = new URL(databaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    databaseUrl = url.toString();
    dropSchema = async () => {
      const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    };
  }
  const config = loadConfig({
    FLAGPOST_DATA_DIR: dir,
    FLAGPOST_ADMIN_TOKEN: 'bench-admin-token-0123456789',
    LOG_LEVEL: 'silent',
    FLAGPOST_RETENTION_INTERVAL_MS: '0',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const handle = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 4 });
  await migrateToLatest(handle.db);
  const services = await compose(config, handle);
  const actor = { type: 'admin_token' as const, id: null, label: 'bench' };
  try {
    const project = await services.projects.createProject('Bench', actor);
    const env = project.environments[0]!;
    await services.flags.createFlag(
      project.key,
      'checkout',
      { type: 'string', variants: { control: 'a', treatment: 'b' }, defaultVariant: 'control' } as never,
      actor,
    );
    await services.flags.updateFlag(
      project.key,
      env.key,
      'checkout',
      {
        state: 'ENABLED',
        rules: [
          {
            id: 'ab',
            name: 'A/B',
            conditions: [],
            serve: {
              split: {
                weights: [
                  { variant: 'control', weight: 50 },
                  { variant: 'treatment', weight: 50 },
                ],
              },
            },
          },
        ],
      } as never,
      actor,
    );
    for (const [key, type] of [
      ['bought', 'proportion'],
      ['revenue', 'mean'],
      ['aov', 'ratio'],
    ] as const) {
      await services.experimentMetrics.create(
        project.key,
        { key, name: key, event: 'purchase', type, direction: 'increase', ...(type === 'ratio' ? { denominatorEvent: 'order' } : {}) },
        actor,
      );
    }
    await services.experiments.create(
      project.key,
      env.key,
      { key: 'bench', name: 'Bench', flagKey: 'checkout', controlVariant: 'control', metrics: ['bought', 'revenue'], guardrails: ['aov'] },
      actor,
    );
    await services.experiments.start(project.key, env.key, 'bench', actor);

    // One exposure per user; the other events are purchases (with a value) and orders, spread over users.
    const started = performance.now();
    let batch: unknown[] = [];
    let written = 0;
    const flush = async () => {
      await services.trackedEvents.track(project.key, env.key, { events: batch });
      written += batch.length;
      batch = [];
    };
    for (let u = 0; u < USERS; u++) {
      batch.push({ kind: 'exposure', flagKey: 'checkout', variant: u % 2 === 0 ? 'control' : 'treatment', targetingKey: `user-${u}` });
      if (batch.length === 1000) await flush();
    }
    for (let i = 0; written + batch.length < EVENTS; i++) {
      const user = `user-${(i * 7919) % USERS}`;
      batch.push(
        i % 3 === 0
          ? { kind: 'track', name: 'order', targetingKey: user, value: 1 }
          : { kind: 'track', name: 'purchase', targetingKey: user, value: (i % 50) + 1 },
      );
      if (batch.length === 1000) await flush();
    }
    if (batch.length > 0) await flush();
    const ingestSeconds = (performance.now() - started) / 1000;
    console.log(`${handle.dialect}: ${written.toLocaleString('en')} events over ${USERS.toLocaleString('en')} users stored in ${ingestSeconds.toFixed(1)} s`);

    for (let r = 0; r < READS; r++) {
      let longest = 0;
      let last = performance.now();
      const timer = setInterval(() => {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
      }, 1);
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const results = await services.experimentResults.results(project.key, env.key, 'bench');
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      clearInterval(timer);
      console.log(
        `results read ${r + 1}: ${ms.toFixed(0)} ms wall, ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms CPU of this process ` +
          `(users ${JSON.stringify(results.users)}, ${results.metrics.length} metrics); longest event-loop pause ${longest.toFixed(0)} ms; load ${os.loadavg()[0]!.toFixed(1)}`,
      );
    }
  } finally {
    await services.stop();
    await handle.close();
    await dropSchema?.();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
