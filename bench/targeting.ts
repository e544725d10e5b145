import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBuilt } from '../test/support/process.ts';
import { adminClient, ROOT } from './lib.ts';
import { ab, median, pinned, rssMb, type Wrk, wrk as wrkIn, type WrkTarget } from './wrk.ts';

// npm run bench:targeting (issue 18): targeted reads against the same reads without rules, in one run,
// server on core 0 and wrk on core 1. Every OFREP request carries a context of ten attributes with a
// targetingKey that changes per request, so that nothing is served from a per-context cache.
//   1. OFREP bulk, 20 flags that all have rules (conditions, a segment, a split) vs the same 20 flags
//      without rules (target >= 0.6).
//   2. Single-flag OFREP with rules vs without (target >= 0.8).
//   3. GET /v1/flags and /v1/flags/{slug} of the flags with rules vs without (unchanged within noise).
//   4. 5,000 flags with 3 rules each, seeded through the admin API (a POST and a PATCH per flag, 8 at a
//      time; the time of the first and of the last 500 flags shows whether a write's cost grows with
//      the environment): snapshot rebuild after one change (target < 200 ms) and RSS.
// BENCH_SECONDS (default 5), BENCH_ROUNDS (3) and BENCH_LARGE_FLAGS (5000) shorten a trial run.

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LARGE = Number(process.env.BENCH_LARGE_FLAGS ?? 5000);
const TOKEN = 'bench-admin-token-0123456789';
const port = 25_000 + Math.floor(Math.random() * 1000);
const base = `http://127.0.0.1:${port}`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-targeting-'));
const wrk = (url: string, target: WrkTarget, seconds = SECONDS) => wrkIn(dir, url, target, seconds);

interface Project {
  key: string;
  environments: Array<{ key: string }>;
}

const admin = adminClient(base, TOKEN);

/** The CPU time a process's main thread has run so far, in ms (Linux schedstat: nanoseconds on a CPU). */
const cpuMs = (pid: number) => Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** The CPU time of all of a process's threads so far (user and system), in ms, from /proc/<pid>/stat. */
function processCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** Runs `task` over `items`, `width` at a time. */
async function inParallel<T>(items: T[], width: number, task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

const COUNTRIES = ['DE', 'FR', 'IT', 'ES', 'NL', 'PL', 'SE', 'AT'];

/**
 * Three rules, different in each flag, as a project's flags are: conditions (four of eight countries, a
 * minimum app version) and the shared segment; a split for one device; a split for everyone. With the
 * bench's context about a third of the flags match the first rule, and the others are served by one of
 * the two splits (bucketed per request: every request has a new targetingKey).
 */
const rules = (i: number) => [
  {
    id: `eu-beta-${i}`,
    name: 'EU beta testers',
    conditions: [
      { attribute: 'country', operator: 'in', values: Array.from({ length: 4 }, (_, k) => COUNTRIES[(i + k) % COUNTRIES.length]!) },
      { attribute: 'app.version', operator: 'semverGte', values: [`${1 + (i % 3)}.0.0`] },
    ],
    segments: ['beta'],
    serve: { variant: 'on' },
  },
  {
    id: `device-${i}`,
    name: 'Device rollout',
    conditions: [{ attribute: 'device', operator: 'equals', values: [i % 4 === 0 ? 'tablet' : 'mobile'] }],
    serve: {
      split: {
        weights: [
          { variant: 'on', weight: 25 + (i % 5) },
          { variant: 'off', weight: 75 - (i % 5) },
        ],
      },
    },
  },
  {
    id: `all-${i}`,
    name: 'Everyone',
    conditions: [],
    serve: {
      split: {
        weights: [
          { variant: 'on', weight: 10 },
          { variant: 'off', weight: 90 },
        ],
      },
    },
  },
];

/** The body of an OFREP request with ten context attributes and a new targetingKey on every request (wrk Lua). */
const contextRequest = `n = (n or 0) + 1
return wrk.format(nil, nil, nil, '{"context":{"targetingKey":"user-' .. n .. '","country":"DE","plan":"pro","email":"dev' .. n .. '@example.com","device":"mobile","app":{"version":"2.3.1"},"language":"de-DE","company":"Acme","age":34,"betaOptIn":true}}')`;

async function main() {
  // The server as `npm start` runs it (dist/main.js, built when the sources changed).
  ensureBuilt();
  const [command, args] = pinned(0, process.execPath, ['dist/main.js']);
  const server = spawn(command, args, {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      FLAGPOST_DATA_DIR: dir,
      FLAGPOST_ADMIN_TOKEN: TOKEN,
      FLAGPOST_RATE_LIMIT_MAX: '1000000000',
    },
  });
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        if (i > 100) throw new Error('the server did not start');
      }
      await sleep(100);
    }
    const targeted = (await admin('POST', '/admin/v1/projects', { name: 'Targeted' })) as Project;
    const plain = (await admin('POST', '/admin/v1/projects', { name: 'Plain' })) as Project;
    await admin('POST', `/admin/v1/projects/${targeted.key}/segments`, {
      key: 'beta',
      name: 'Beta testers',
      match: 'all',
      conditions: [
        { attribute: 'email', operator: 'endsWith', values: ['@example.com'] },
        { attribute: 'plan', operator: 'in', values: ['pro', 'team'] },
      ],
    });
    for (let i = 0; i < 20; i++) {
      for (const project of [targeted, plain]) {
        await admin('POST', `/admin/v1/projects/${project.key}/flags`, {
          slug: `flag-${i}`,
          enabled: i % 2 === 0,
          description: `Flag ${i} of the web shop`,
          payload: { variant: i },
        });
      }
      await admin('PATCH', `/admin/v1/projects/${targeted.key}/environments/${targeted.environments[2]!.key}/flags/flag-${i}`, { rules: rules(i) });
    }
    const keysOf = (p: Project) => ({ 'x-project-key': p.key, 'x-environment-key': p.environments[2]!.key });
    const ofrep = (p: Project): WrkTarget => ({ method: 'POST', headers: { ...keysOf(p), 'content-type': 'application/json' }, request: contextRequest });
    console.log(
      `machine: ${os.availableParallelism()} cores, ${os.cpus()[0]?.model}, Node ${process.version}; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}; wrk -t1 -c50, ${SECONDS} s x ${ROUNDS} rounds`,
    );
    const sample = await fetch(`${base}/ofrep/v1/evaluate/flags`, {
      method: 'POST',
      headers: { ...keysOf(targeted), 'content-type': 'application/json' },
      body: '{"context":{"targetingKey":"user-7","country":"DE","plan":"pro","email":"a@example.com","device":"mobile","app":{"version":"2.3.1"}}}',
    });
    const reasons = ((await sample.json()) as { flags: Array<{ reason: string }> }).flags.map((f) => f.reason);
    const byReason = new Map<string, number>();
    for (const reason of reasons) byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
    console.log(`   (targeted bulk answers: ${[...byReason].map(([reason, n]) => `${n} ${reason}`).join(', ')})`);

    // Server CPU time per request of each run: on a busy machine throughput also measures how much of a
    // core the server got, CPU time per request what a request costs it.
    const cpuPerRequest = new Map<string, number[]>();
    const costed = (label: string, run: () => Wrk) => () => {
      const before = processCpuMs(server.pid!);
      const result = run();
      const us = ((processCpuMs(server.pid!) - before) * 1000) / (result.rps * SECONDS);
      cpuPerRequest.set(label, [...(cpuPerRequest.get(label) ?? []), us]);
      return result;
    };
    const cost = (label: string) => median(cpuPerRequest.get(label)!);
    const bulkUrl = `${base}/ofrep/v1/evaluate/flags`;
    wrk(bulkUrl, ofrep(targeted), 1);
    wrk(bulkUrl, ofrep(plain), 1);
    const bulk = ab(
      ROUNDS,
      costed('bulk rules', () => wrk(bulkUrl, ofrep(targeted))),
      costed('bulk plain', () => wrk(bulkUrl, ofrep(plain))),
    );
    console.log(
      `1. OFREP bulk, 20 flags with rules: ${bulk.a.rps.toFixed(0)} req/s (p99 ${bulk.a.p99} ms) vs without rules ${bulk.b.rps.toFixed(0)} req/s (p99 ${bulk.b.p99} ms): ratio ${(bulk.a.rps / bulk.b.rps).toFixed(2)} (target >= 0.6); server CPU per request ${cost('bulk rules').toFixed(1)} vs ${cost('bulk plain').toFixed(1)} µs: ratio ${(cost('bulk plain') / cost('bulk rules')).toFixed(2)}`,
    );

    const singleUrl = `${base}/ofrep/v1/evaluate/flags/flag-3`;
    const single = ab(
      ROUNDS,
      costed('single rules', () => wrk(singleUrl, ofrep(targeted))),
      costed('single plain', () => wrk(singleUrl, ofrep(plain))),
    );
    console.log(
      `2. OFREP single flag with rules: ${single.a.rps.toFixed(0)} req/s (p99 ${single.a.p99} ms) vs without ${single.b.rps.toFixed(0)} req/s: ratio ${(single.a.rps / single.b.rps).toFixed(2)} (target >= 0.8); server CPU per request ${cost('single rules').toFixed(1)} vs ${cost('single plain').toFixed(1)} µs: ratio ${(cost('single plain') / cost('single rules')).toFixed(2)}`,
    );

    for (const url of ['/v1/flags', '/v1/flags/flag-3']) {
      const v1 = ab(
        ROUNDS,
        () => wrk(base + url, { headers: keysOf(targeted) }),
        () => wrk(base + url, { headers: keysOf(plain) }),
      );
      console.log(
        `3. GET ${url}: flags with rules ${v1.a.rps.toFixed(0)} req/s vs without ${v1.b.rps.toFixed(0)} req/s: ratio ${(v1.a.rps / v1.b.rps).toFixed(2)} (unchanged within noise)`,
      );
    }

    const large = (await admin('POST', '/admin/v1/projects', { name: 'Large' })) as Project;
    await admin('POST', `/admin/v1/projects/${large.key}/segments`, {
      key: 'beta',
      name: 'Beta',
      match: 'any',
      conditions: [{ attribute: 'plan', operator: 'equals', values: ['pro'] }],
    });
    const largeEnv = large.environments[2]!.key;
    const started = performance.now();
    const finished: number[] = [];
    await inParallel(
      Array.from({ length: LARGE }, (_, i) => i),
      8,
      async (i) => {
        await admin('POST', `/admin/v1/projects/${large.key}/flags`, { slug: `flag-${String(i).padStart(5, '0')}`, description: `Flag number ${i}` });
        await admin('PATCH', `/admin/v1/projects/${large.key}/environments/${largeEnv}/flags/flag-${String(i).padStart(5, '0')}`, { rules: rules(i) });
        finished.push(performance.now() - started);
      },
    );
    const seeded = performance.now() - started;
    const slice = Math.min(500, Math.floor(LARGE / 2));
    const firstSlice = finished[slice - 1]!;
    const lastSlice = seeded - finished[LARGE - slice - 1]!;
    const largeKeys = keysOf(large);
    const read = async (url: string, init: RequestInit = {}) => {
      const t = performance.now();
      const res = await fetch(base + url, {
        ...init,
        headers: { ...largeKeys, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
      });
      await res.arrayBuffer();
      return performance.now() - t;
    };
    const cold = await read('/v1/flags/flag-00001');
    const warmReads: number[] = [];
    for (let i = 0; i < 5; i++) warmReads.push(await read('/v1/flags/flag-00001'));
    // A warm read's own time, taken off the read after a change, leaves the rebuild.
    const warm = median(warmReads);
    const rebuilds: number[] = [];
    // The server's own CPU time for the read after a change (the rebuild and one read): on a busy machine
    // wall time mostly measures waiting for a core, CPU time what the rebuild costs.
    const rebuildsCpu: number[] = [];
    for (let i = 0; i < 5; i++) {
      await admin('PATCH', `/admin/v1/projects/${large.key}/environments/${largeEnv}/flags/flag-00042`, { description: `Changed ${i}` });
      const cpu = cpuMs(server.pid!);
      rebuilds.push((await read('/v1/flags/flag-00001')) - warm);
      rebuildsCpu.push(cpuMs(server.pid!) - cpu);
    }
    const bulkLarge = await read('/ofrep/v1/evaluate/flags', {
      method: 'POST',
      body: '{"context":{"targetingKey":"u-1","country":"DE","plan":"pro","device":"mobile"}}',
    });
    const rss = rssMb(server.pid!);
    console.log(
      `4. ${LARGE} flags with 3 rules each, seeded through the admin API in ${(seeded / 1000).toFixed(0)} s (first ${slice} flags ${(firstSlice / 1000).toFixed(1)} s, last ${slice} ${(lastSlice / 1000).toFixed(1)} s): first load ${cold.toFixed(0)} ms; snapshot rebuild after one change (load, compile, ready answers), median of 5: ${median(rebuilds).toFixed(0)} ms (max ${Math.max(...rebuilds).toFixed(0)}; target < 200 ms), server CPU time ${median(rebuildsCpu).toFixed(0)} ms; one OFREP bulk evaluation of all of them ${bulkLarge.toFixed(0)} ms; server RSS ${rss.rss.toFixed(0)} MB (peak ${rss.peak.toFixed(0)} MB)`,
    );
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
