import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';

// Helpers of bench/run.ts: servers as child processes (so that RSS and CPU belong to one server), load
// with autocannon from this process, and the result table.

export const ROOT = new URL('..', import.meta.url).pathname;

/**
 * Admin API calls with a bearer token, each on a connection of its own (pooled ones may have been closed by
 * the server while a load generator ran). Answers the parsed JSON body; rejects on a status >= 300.
 */
export function adminClient(base: string, token: string): (method: string, url: string, body?: unknown) => Promise<unknown> {
  return (method, url, body) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        base + url,
        { method, agent: false, headers: { authorization: `Bearer ${token}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () =>
            res.statusCode! >= 300 ? reject(new Error(`${method} ${url}: ${res.statusCode} ${text}`)) : resolve(text ? JSON.parse(text) : undefined),
          );
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  throughput: { average: number };
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
}
interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}
const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as (options: AutocannonOptions) => Promise<AutocannonResult>;

export interface Server {
  name: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `node <script>` (through tsx for a .ts file) and waits until `readyUrl` answers; returns after `startedMs`. */
export async function startServer(
  name: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  readyUrl: (port: number) => string,
  headers: Record<string, string> = {},
) {
  const port = Number(env.PORT);
  const started = performance.now();
  const child = spawn(process.execPath, [...(script.endsWith('.ts') ? ['--import', 'tsx'] : []), script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr = (stderr + String(chunk)).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited early: ${stderr}`);
    try {
      const res = await fetch(readyUrl(port), { headers });
      await res.arrayBuffer();
      if (res.status < 500) break;
    } catch {
      // not listening yet
    }
    if (performance.now() - started > 30_000) throw new Error(`${name} did not start within 30 s: ${stderr}`);
    await sleep(5);
  }
  const startedMs = performance.now() - started;
  const server: Server = {
    name,
    port,
    child,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  return { server, startedMs };
}

/** A process's CPU seconds so far (user + system), from /proc; Linux only. */
export function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Peak resident set size of a process since it started (VmHWM), in MB; Linux only. */
export function peakRssMb(pid: number): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export interface Load {
  rps: number;
  p50: number;
  p99: number;
  mbPerSec: number;
  ok: number;
  non2xx: number;
  errors: number;
}

export interface Target {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export async function load(target: Target, seconds: number, connections = 50): Promise<Load> {
  const result = await autocannon({ connections, duration: seconds, ...target });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    mbPerSec: result.throughput.average / 1e6,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** Sums rounds: request rates and rates averaged, latencies as the mean of the rounds' percentiles. */
function combine(rounds: Load[]): Load {
  const mean = (pick: (l: Load) => number) => rounds.reduce((sum, l) => sum + pick(l), 0) / rounds.length;
  const sum = (pick: (l: Load) => number) => rounds.reduce((total, l) => total + pick(l), 0);
  return {
    rps: mean((l) => l.rps),
    p50: mean((l) => l.p50),
    p99: mean((l) => l.p99),
    mbPerSec: mean((l) => l.mbPerSec),
    ok: sum((l) => l.ok),
    non2xx: sum((l) => l.non2xx),
    errors: sum((l) => l.errors),
  };
}

/**
 * A against B in alternating rounds (A B, B A, A B, ...) after a discarded warm-up of each, so that
 * machine noise and thermal drift hit both sides alike.
 */
export async function abRounds(a: Target, b: Target, rounds: number, seconds: number, connections = 50): Promise<{ a: Load; b: Load }> {
  await load(a, 1, connections);
  await load(b, 1, connections);
  const as: Load[] = [];
  const bs: Load[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      as.push(await load(a, seconds, connections));
      bs.push(await load(b, seconds, connections));
    } else {
      bs.push(await load(b, seconds, connections));
      as.push(await load(a, seconds, connections));
    }
  }
  return { a: combine(as), b: combine(bs) };
}

export async function rounds(target: Target, count: number, seconds: number, connections = 50): Promise<Load> {
  await load(target, 1, connections);
  const all: Load[] = [];
  for (let i = 0; i < count; i++) all.push(await load(target, seconds, connections));
  return combine(all);
}

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString('en-US'),
  ms: (n: number) => `${n.toFixed(n < 10 ? 2 : 1)}`,
  ratio: (n: number) => n.toFixed(2),
};
