import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBuilt } from '../test/support/process.ts';
import { adminClient, cpuSeconds, ROOT } from './lib.ts';
import { ab as ab_, pinned, type Wrk, wrk as wrk_, type WrkTarget } from './wrk.ts';

// npm run bench:events (issue 32): the experiments' event intake and what it costs the flag reads, in one
// run. The server runs on core 0 (taskset), the load (wrk, and this process's paced ingest) on core 1.
//   1. POST /v1/track in batches of 100 events: events per second on the server's one core.
//   2. GET /v1/flags and a single-flag OFREP evaluation, alone and while 10,000 events/s are ingested.
//   3. CPU per single-flag OFREP evaluation of a flag whose split a running experiment measures (each
//      answer records a server-side exposure) against the same split on a flag without an experiment.

const ROUNDS = 3;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const TOKEN = 'bench-admin-token-0123456789';
const port = 24_000 + Math.floor(Math.random() * 1000);
const base = `http://127.0.0.1:${port}`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-events-'));
const wrk = (url: string, options: WrkTarget, seconds = SECONDS, connections = 50) => wrk_(dir, url, options, seconds, connections);
const ab = (a: () => Wrk, b: () => Wrk) => ab_(ROUNDS, a, b);
const admin = adminClient(base, TOKEN);

const split = {
  id: 'half',
  name: 'Half and half',
  enabled: true,
  conditions: [],
  segments: [],
  serve: {
    split: {
      bucketing: 'flagd-fractional-v2',
      weights: [
        { variant: 'off', weight: 50 },
        { variant: 'on', weight: 50 },
      ],
    },
  },
};

/** A batch of 100 events: 50 users' exposures and one tracked event each. */
function batch(offset: number): string {
  const events: unknown[] = [];
  for (let i = 0; i < 50; i++) {
    const targetingKey = `user-${offset + i}`;
    events.push({ kind: 'exposure', flagKey: 'measured', variant: i % 2 ? 'on' : 'off', targetingKey });
    events.push({ kind: 'track', name: 'purchase', targetingKey, value: 12.5 });
  }
  return JSON.stringify({ events });
}

async function main() {
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
    const project = (await admin('POST', '/admin/v1/projects', { name: 'Events' })) as { key: string; environments: Array<{ key: string }> };
    const env = project.environments[0]!.key;
    for (const slug of ['measured', 'plain']) {
      await admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug, enabled: false });
      await admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env}/flags/${slug}`, { rules: [split] });
    }
    for (let i = 0; i < 20; i++) await admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: `flag-${i}`, enabled: i % 2 === 0 });
    await admin('POST', `/admin/v1/projects/${project.key}/metrics`, {
      key: 'purchase-rate',
      name: 'purchase rate',
      event: 'purchase',
      type: 'proportion',
      direction: 'increase',
    });
    const experiments = `/admin/v1/projects/${project.key}/environments/${env}/experiments`;
    await admin('POST', experiments, { key: 'bench', name: 'Bench', flagKey: 'measured', controlVariant: 'off', metrics: ['purchase-rate'] });
    await admin('POST', `${experiments}/bench/start`);
    const keys = { 'x-project-key': project.key, 'x-environment-key': env };
    const json = { ...keys, 'content-type': 'application/json' };
    const ofrep: WrkTarget = {
      method: 'POST',
      headers: json,
      request: `n = (n or 0) + 1\nreturn wrk.format(nil, nil, nil, '{"context":{"targetingKey":"u' .. n .. '"}}')`,
    };
    console.log(
      `machine: ${os.availableParallelism()} cores, ${os.cpus()[0]?.model}, Node ${process.version}; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}; wrk -t1 -c50, ${SECONDS} s x ${ROUNDS} rounds`,
    );

    // 1. Ingest.
    const ingest = wrk(`${base}/v1/track`, { method: 'POST', headers: json, body: batch(0) }, SECONDS, 20);
    console.log(
      `1. POST /v1/track, 100 events a batch: ${Math.round(ingest.rps)} batches/s = ${Math.round(ingest.rps * 100)} events/s (target >= 50,000), p99 ${ingest.p99} ms, non-2xx ${ingest.non2xx}`,
    );

    // 2. Reads alone, and while 10,000 events/s arrive: 100 batches a second from a pacer process on core 1
    // (wrk runs through spawnSync, which holds this process's event loop, so the pacer is a process of its own).
    const pacerSource = `
      const [url, projectKey, environmentKey] = process.argv.slice(1);
      const headers = { 'x-project-key': projectKey, 'x-environment-key': environmentKey, 'content-type': 'application/json' };
      const started = Date.now();
      let sent = 0;
      let stop = false;
      process.on('SIGTERM', () => (stop = true));
      const body = (offset) => JSON.stringify({ events: Array.from({ length: 50 }, (_, i) => [
        { kind: 'exposure', flagKey: 'measured', variant: i % 2 ? 'on' : 'off', targetingKey: 'p' + (offset + i) },
        { kind: 'track', name: 'purchase', targetingKey: 'p' + (offset + i), value: 1 },
      ]).flat() });
      (async () => {
        while (!stop) {
          const due = Math.floor(((Date.now() - started) / 1000) * 100);
          const pending = [];
          while (sent < due) pending.push(fetch(url, { method: 'POST', headers, body: body(sent++ * 50) }).then((r) => r.arrayBuffer()));
          await Promise.all(pending);
          await new Promise((r) => setTimeout(r, 5));
        }
        console.log(String((sent * 100) / ((Date.now() - started) / 1000)));
        process.exit(0);
      })();`;
    const withIngest = async (target: () => Wrk) => {
      const [pacerCommand, pacerArgs] = pinned(1, process.execPath, ['-e', pacerSource, `${base}/v1/track`, project.key, env]);
      const pacer = spawn(pacerCommand, pacerArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      pacer.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const exited = new Promise((resolve) => pacer.on('exit', resolve));
      await sleep(500);
      const result = target();
      pacer.kill('SIGTERM');
      await exited;
      return { result, rate: Number(out.trim()) };
    };
    for (const [name, url, options] of [
      ['GET /v1/flags', `${base}/v1/flags`, { headers: keys }],
      ['OFREP single flag', `${base}/ofrep/v1/evaluate/flags/flag-1`, ofrep],
    ] as const) {
      const alone: Wrk[] = [];
      const busy: Wrk[] = [];
      let rate = 0;
      const busyCpu: number[] = [];
      const aloneCpu: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        let before = cpuSeconds(server.pid!);
        alone.push(wrk(url, options));
        aloneCpu.push((cpuSeconds(server.pid!) - before) / SECONDS);
        const r = await withIngest(() => {
          before = cpuSeconds(server.pid!);
          const result = wrk(url, options);
          busyCpu.push((cpuSeconds(server.pid!) - before) / SECONDS);
          return result;
        });
        busy.push(r.result);
        rate = r.rate;
      }
      console.log(
        `   server CPU (share of its core): alone ${aloneCpu.map((c) => c.toFixed(2)).join('/')}, while ingesting ${busyCpu.map((c) => c.toFixed(2)).join('/')}`,
      );
      const med = (runs: Wrk[]) => runs.map((r) => r.rps).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
      console.log(
        `2. ${name}: ${Math.round(med(alone))} req/s alone, ${Math.round(med(busy))} req/s while ingesting ${Math.round(rate)} events/s: ratio ${(med(busy) / med(alone)).toFixed(2)} (target >= 0.9)`,
      );
    }

    // 3. CPU per evaluation with server-side exposures against the same split without an experiment.
    const cpuPerRequest = (flag: string) => () => {
      const before = cpuSeconds(server.pid!);
      const result = wrk(`${base}/ofrep/v1/evaluate/flags/${flag}`, ofrep);
      const cpu = cpuSeconds(server.pid!) - before;
      return { ...result, p50: (cpu / (result.rps * SECONDS)) * 1e6 };
    };
    const { a: measured, b: plain } = ab(cpuPerRequest('measured'), cpuPerRequest('plain'));
    console.log(
      `3. OFREP single flag, CPU per request: ${measured.p50.toFixed(1)} us recording exposures, ${plain.p50.toFixed(1)} us without an experiment: ratio ${(measured.p50 / plain.p50).toFixed(2)} (target <= 1.15); ${Math.round(measured.rps)} vs ${Math.round(plain.rps)} req/s`,
    );
  } finally {
    server.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
