import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBuilt } from '../test/support/process.ts';
import { ROOT } from './lib.ts';
import { median, wrk, type Wrk } from './wrk.ts';

// npm run bench:workers (part of npm run bench), issue 19 section 2: what FLAGPOST_WORKERS costs and gives.
// For 1 and 2 workers, on SQLite, reading one flag (GET /v1/flags/<slug>, the hot read, with the per-client
// rate limit counted as in production but never reached):
//   - CPU cost: CPU seconds (user + system, read from /proc) of every process of the server, the primary
//     included, per 10,000 reads; it hardly moves when other work shares the cores;
//   - throughput: wrk pinned to core 1, the server (every process) to core 0, and, on a machine with more
//     than two cores, the server on every core but wrk's;
//   - the same without rate limits, to show what counting in the primary (one IPC message per event-loop
//     turn of a worker) costs.
// Rounds alternate between the setups; the median round of each is shown. On a busy machine the figures
// are "under load": compare the ratios, which are measured in the same run.

const ROUNDS = Number(process.env.WORKERS_BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.WORKERS_BENCH_SECONDS ?? 5);
const TOKEN = 'workers-bench-admin-token-0123456789';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-workers-bench-'));
const cores = os.availableParallelism();

interface Running {
  child: ChildProcess;
  port: number;
  exited: Promise<void>;
}

async function start(workers: number, serverCores: string, rateLimit = true): Promise<Running> {
  const port = 22_000 + Math.floor(Math.random() * 1000);
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    FLAGPOST_DATA_DIR: dataDir,
    FLAGPOST_ADMIN_TOKEN: TOKEN,
    LOG_LEVEL: 'warn',
    FLAGPOST_WORKERS: String(workers),
    // Counted on every read, as in production, but never refused; or off, to show what counting costs.
    FLAGPOST_RATE_LIMIT_MAX: rateLimit ? '1000000000' : '0',
  };
  const [command, args] = fs.existsSync('/usr/bin/taskset')
    ? ['taskset', ['-c', serverCores, process.execPath, 'dist/main.js']]
    : [process.execPath, ['dist/main.js']];
  const child = spawn(command as string, args as string[], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    // Every worker answers once warm: a few dozen new connections reach all of them.
    const answers = await Promise.all(
      Array.from({ length: 4 * workers }, () =>
        fetch(`http://127.0.0.1:${port}/healthz`, { headers: { connection: 'close' } }).then(
          (r) => r.status,
          () => 0,
        ),
      ),
    );
    if (answers.every((s) => s === 200) && processTree(child.pid!).length >= (workers > 1 ? workers + 1 : 1)) return { child, port, exited };
    await sleep(100);
  }
  throw new Error(`the server with ${workers} workers did not start`);
}

async function stop(server: Running) {
  server.child.kill('SIGTERM');
  await server.exited;
}

/** The pid and every descendant pid (taskset execs node, so the child is the server itself). */
function processTree(pid: number): number[] {
  let children: number[] = [];
  try {
    children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // gone, or not Linux
  }
  return [pid, ...children.flatMap(processTree)];
}

/** CPU seconds (user + system) used so far by every process of the server. */
function cpuSeconds(pid: number): number {
  let ticks = 0;
  for (const p of processTree(pid)) {
    try {
      const fields = fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited meanwhile
    }
  }
  return ticks / 100;
}

interface Round extends Wrk {
  cpuPer10k: number;
}

function measure(server: Running, url: string, headers: Record<string, string>): Round {
  const before = cpuSeconds(server.child.pid!);
  const result = wrk(dataDir, `http://127.0.0.1:${server.port}${url}`, { headers }, SECONDS);
  const used = cpuSeconds(server.child.pid!) - before;
  const requests = result.rps * SECONDS;
  return { ...result, cpuPer10k: (used / requests) * 10_000 };
}

async function main() {
  ensureBuilt();
  const seed = await start(1, '0');
  const admin = (method: string, url: string, body: unknown) =>
    fetch(`http://127.0.0.1:${seed.port}${url}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<Record<string, unknown>>);
  const project = (await admin('POST', '/admin/v1/projects', { name: 'Bench' })) as { key: string; environments: Array<{ key: string }> };
  await admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'checkout' });
  await admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/checkout`, { enabled: true });
  await stop(seed);
  const headers = { 'x-project-key': project.key, 'x-environment-key': project.environments[0]!.key };
  const url = '/v1/flags/checkout';

  const setups: Array<{ name: string; workers: number; serverCores: string; rateLimit: boolean }> = [
    { name: '1 worker, pinned to core 0', workers: 1, serverCores: '0', rateLimit: true },
    { name: '2 workers, pinned to core 0', workers: 2, serverCores: '0', rateLimit: true },
    { name: '1 worker, core 0, no rate limit', workers: 1, serverCores: '0', rateLimit: false },
    { name: '2 workers, core 0, no rate limit', workers: 2, serverCores: '0', rateLimit: false },
  ];
  if (cores > 2) {
    const spread = `0,2-${cores - 1}`;
    setups.push({ name: `${cores - 1} workers, cores ${spread}`, workers: cores - 1, serverCores: spread, rateLimit: true });
  }
  const results = new Map<string, Round[]>(setups.map((s) => [s.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const setup of setups) {
      const server = await start(setup.workers, setup.serverCores, setup.rateLimit);
      // A short warm-up: compiled code and the read model's snapshot.
      wrk(dataDir, `http://127.0.0.1:${server.port}${url}`, { headers }, 1);
      results.get(setup.name)!.push(measure(server, url, headers));
      await stop(server);
    }
  }

  const pick = (runs: Round[]) => runs.find((r) => r.rps === median(runs.map((x) => x.rps)))!;
  const base = pick(results.get(setups[0]!.name)!);
  const loadAverage = os.loadavg()[0]!.toFixed(2);
  console.log(`\nbench:workers: GET ${url} on SQLite, wrk -c50 on core 1, ${ROUNDS} rounds of ${SECONDS} s, ${cores} cores, load average ${loadAverage}`);
  console.log('setup                              req/s     p50 ms   p99 ms   CPU s per 10k reads   req/s ratio   CPU ratio');
  for (const setup of setups) {
    const r = pick(results.get(setup.name)!);
    const cpuMedian = median(results.get(setup.name)!.map((x) => x.cpuPer10k));
    console.log(
      `${setup.name.padEnd(34)} ${r.rps.toFixed(0).padStart(7)}   ${r.p50.toFixed(2).padStart(6)}   ${r.p99.toFixed(2).padStart(6)}   ${cpuMedian.toFixed(3).padStart(19)}   ${(r.rps / base.rps).toFixed(2).padStart(11)}   ${(cpuMedian / median(results.get(setups[0]!.name)!.map((x) => x.cpuPer10k))).toFixed(2).padStart(9)}`,
    );
    if (r.non2xx > 0) console.log(`  (${r.non2xx} answers were not 2xx)`);
  }
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => fs.rmSync(dataDir, { recursive: true, force: true }));
