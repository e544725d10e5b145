import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBuilt } from '../test/support/process.ts';
import { ROOT } from './lib.ts';
import { ab as ab_, pinned, type Wrk, wrk as wrk_ } from './wrk.ts';

// npm run bench:metrics (issue 23): single-flag reads (GET /v1/flags/<slug> and the OFREP single
// evaluation, both on the fast path) with metrics on (FLAGPOST_METRICS_PORT set, traces off) against the
// same build with metrics off, in one run. Two servers on core 0, one loaded at a time, wrk on core 1;
// ratios are of the median of alternating rounds, while a scrape of /metrics runs every second as
// Prometheus would (more often than its usual 15 s). Target: on/off >= 0.9.

const ROUNDS = 3;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const TOKEN = 'bench-admin-token-0123456789';
const basePort = 25_000 + Math.floor(Math.random() * 1000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-metrics-'));
const wrk = (url: string, headers: Record<string, string>, method = 'GET') => wrk_(dir, url, { method, headers }, SECONDS);

async function start(port: number, extra: Record<string, string>): Promise<ChildProcess> {
  const data = path.join(dir, String(port));
  const [command, args] = pinned(0, process.execPath, ['dist/main.js']);
  const child = spawn(command, args, {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      FLAGPOST_DATA_DIR: data,
      FLAGPOST_ADMIN_TOKEN: TOKEN,
      FLAGPOST_RATE_LIMIT_MAX: '1000000000',
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      ...extra,
    },
  });
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
    } catch {
      if (i > 150) throw new Error('a server did not start');
    }
    await sleep(100);
  }
  return child;
}

async function seed(port: number): Promise<Record<string, string>> {
  const call = async (url: string, body: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<{ key: string; environments: Array<{ key: string }> }>;
  };
  const project = await call('/admin/v1/projects', { name: 'Bench' });
  for (let i = 0; i < 20; i++) await call(`/admin/v1/projects/${project.key}/flags`, { slug: `flag-${i}`, enabled: i % 2 === 0, description: `Flag ${i}` });
  return { 'x-project-key': project.key, 'x-environment-key': project.environments[0]!.key };
}

async function main() {
  // The server as `npm start` runs it (dist/main.js, built when the sources changed).
  ensureBuilt();
  const off = basePort;
  const on = basePort + 10;
  const metricsPort = basePort + 11;
  const servers = [await start(off, {}), await start(on, { FLAGPOST_METRICS_PORT: String(metricsPort), FLAGPOST_METRICS_HOST: '127.0.0.1' })];
  let scraping = true;
  try {
    const keysOff = await seed(off);
    const keysOn = await seed(on);
    const scraper = (async () => {
      while (scraping) {
        await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
        await sleep(1000);
      }
    })();
    console.log(
      `machine: ${os.availableParallelism()} cores, load average ${os.loadavg()[0]!.toFixed(2)}, Node ${process.version}; wrk -t1 -c50, ${SECONDS} s x ${ROUNDS} rounds`,
    );
    const show = (what: string, r: { a: Wrk; b: Wrk }) =>
      console.log(
        `${what}: metrics on ${r.a.rps.toFixed(0)} req/s (p99 ${r.a.p99} ms) vs off ${r.b.rps.toFixed(0)} req/s (p99 ${r.b.p99} ms): ratio ${(r.a.rps / r.b.rps).toFixed(2)} (target >= 0.9)`,
      );
    const v1 = (port: number, keys: Record<string, string>) => () => wrk(`http://127.0.0.1:${port}/v1/flags/flag-3`, keys);
    v1(off, keysOff)();
    v1(on, keysOn)();
    show('GET /v1/flags/<slug>', ab_(ROUNDS, v1(on, keysOn), v1(off, keysOff)));
    const ofrep = (port: number, keys: Record<string, string>) => () => wrk(`http://127.0.0.1:${port}/ofrep/v1/evaluate/flags/flag-3`, keys, 'POST');
    show('POST /ofrep/v1/evaluate/flags/<key>', ab_(ROUNDS, ofrep(on, keysOn), ofrep(off, keysOff)));
    console.log(`load average after: ${os.loadavg()[0]!.toFixed(2)} (a busy machine lowers both sides; the ratio is what this measures)`);
    scraping = false;
    await scraper;
  } finally {
    scraping = false;
    for (const server of servers) server.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
