import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// wrk helpers of bench/ofrep.ts and bench/targeting.ts: the server runs on core 0 and the load on core 1
// (taskset, when present), so that the two do not share a core; ratios are of medians over alternating rounds.

export interface Wrk {
  rps: number;
  p50: number;
  p99: number;
  bytesPerSec: number;
  non2xx: number;
}

export interface WrkTarget {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Lua run per request (wrk's `request` function body), for bodies that change per request. */
  request?: string;
}

/** `command args` pinned to one core when taskset is there. */
export const pinned = (core: number, command: string, args: string[]) =>
  (fs.existsSync('/usr/bin/taskset') ? ['taskset', ['-c', String(core), command, ...args]] : [command, args]) as [string, string[]];

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One wrk run from core 1; a Lua script sets method, headers and body. Scripts are written to `dir`. */
export function wrk(dir: string, url: string, options: WrkTarget, seconds: number, connections = 50): Wrk {
  const script = path.join(dir, `wrk-${Math.random().toString(36).slice(2)}.lua`);
  const lines = [`wrk.method = ${JSON.stringify(options.method ?? 'GET')}`];
  for (const [name, value] of Object.entries(options.headers ?? {})) lines.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  if (options.body !== undefined) lines.push(`wrk.body = ${JSON.stringify(options.body)}`);
  if (options.request !== undefined) lines.push(`request = function()\n${options.request}\nend`);
  fs.writeFileSync(script, `${lines.join('\n')}\n`);
  const [command, args] = pinned(1, 'wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, url]);
  const out = spawnSync(command, args, { encoding: 'utf8' }).stdout;
  const ms = (label: string) => {
    const m = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
    return m ? Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1) : NaN;
  };
  const transfer = /Transfer\/sec:\s+([\d.]+)(B|KB|MB|GB)/.exec(out);
  const unit = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[transfer?.[2] as 'B'] ?? 1;
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    p50: ms('50%'),
    p99: ms('99%'),
    bytesPerSec: Number(transfer?.[1] ?? NaN) * unit,
    non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0),
  };
}

/** Alternating rounds of two targets; the median run of each. */
export function ab(rounds: number, a: () => Wrk, b: () => Wrk): { a: Wrk; b: Wrk } {
  const as: Wrk[] = [];
  const bs: Wrk[] = [];
  for (let i = 0; i < rounds; i++) {
    as.push(a());
    bs.push(b());
  }
  const pick = (runs: Wrk[]) => runs.find((r) => r.rps === median(runs.map((x) => x.rps)))!;
  return { a: pick(as), b: pick(bs) };
}

/** A process's resident memory now and at its peak, in MB (Linux). */
export function rssMb(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}
