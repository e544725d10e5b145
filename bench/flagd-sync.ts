import { type ChildProcess, fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBuilt } from '../test/support/process.ts';
import { adminClient, ROOT } from './lib.ts';
import { median, pinned, rssMb, wrk as wrkIn } from './wrk.ts';

// npm run bench:flagd-sync (issue 21): PROVIDERS (1,000) published flagd providers in in-process mode
// (@openfeature/flagd-provider), each on its own gRPC connection, synced to one environment of one
// instance (`npm run build`, then `node dist/main.js` pinned to core 0; the providers, spread over
// PROCESSES (4) child processes, and wrk pinned to core 1).
//   1. CHANGES (20) flag changes through the admin API, one after the other: delay from sending the PATCH
//      (and from its answer) to each provider's configuration-changed event with the new rule: p50, p99,
//      max over all providers and changes (target p99 < 1 s).
//   2. The server's RSS (VmRSS) without providers and with them connected.
//   3. GET /v1/flags/{slug} with wrk, without providers (before they connect and after they left) and with
//      them connected: ratio of medians (target >= 0.8).
//   4. The changes of 1. again to PROVIDERS bare grpc-js SyncFlags streams (same .proto) that only check
//      the message: the server's share of the delay, apart from the providers' parsing on their shared core.
// BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_PROVIDERS (1000), BENCH_PROCESSES (4), BENCH_CHANGES (20)
// shorten a trial run.

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PROVIDERS = Number(process.env.BENCH_PROVIDERS ?? 1000);
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 4);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 20);
const TOKEN = 'bench-admin-token-0123456789';
const FLAG = 'sync-bench';
const port = 26_000 + Math.floor(Math.random() * 1000);
const syncPort = port + 1000;
const base = `http://127.0.0.1:${port}`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-flagd-sync-'));
const wrk = (url: string, headers: Record<string, string>) => wrkIn(dir, url, { headers }, SECONDS);
const wallNow = () => performance.timeOrigin + performance.now();

interface Project {
  key: string;
  environments: Array<{ key: string }>;
}

const admin = adminClient(base, TOKEN);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((sorted.length * p) / 100) - 1)] ?? NaN;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

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
      FLAGPOST_FLAGD_SYNC_PORT: String(syncPort),
      FLAGPOST_FLAGD_SYNC_HOST: '127.0.0.1',
      // Every provider connects from 127.0.0.1, one address: the per-address cap must let them all in.
      FLAGPOST_MAX_STREAMS_PER_CLIENT: String(PROVIDERS + 100),
    },
  });
  const children: ChildProcess[] = [];
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        if (i > 300) throw new Error('the server did not start');
      }
      await sleep(100);
    }
    const project = (await admin('POST', '/admin/v1/projects', { name: 'Sync bench' })) as Project;
    const envKey = project.environments[2]!.key;
    for (let i = 0; i < 20; i++) {
      await admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: `flag-${i}`, enabled: i % 2 === 0, payload: { variant: i } });
    }
    await admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: FLAG, enabled: true });
    const flagUrl = `/admin/v1/projects/${project.key}/environments/${envKey}/flags/${FLAG}`;
    const rule = (n: number) => ({
      rules: [{ id: 'change', conditions: [{ attribute: 'change', operator: 'equals', values: [String(n)] }], serve: { variant: 'on' } }],
    });
    await admin('PATCH', flagUrl, { ...rule(0), enabled: true });
    const { selector } = (await admin('POST', `/admin/v1/projects/${project.key}/environments/${envKey}/flagd-sync-token`)) as { selector: string };
    const keys = { 'x-project-key': project.key, 'x-environment-key': envKey };
    const slugUrl = `${base}/v1/flags/flag-3`;

    console.log(
      `machine: ${os.availableParallelism()} cores, ${os.cpus()[0]?.model}, Node ${process.version}; load average ${load()}; ${PROVIDERS} providers in ${PROCESSES} processes; wrk -t1 -c50, ${SECONDS} s x ${ROUNDS} rounds`,
    );

    // Reads and RSS without providers.
    wrk(slugUrl, keys);
    const without: number[] = [];
    for (let i = 0; i < ROUNDS; i++) without.push(wrk(slugUrl, keys).rps);
    const rssWithout = rssMb(server.pid!);

    /** Connects PROVIDERS providers (or bare streams) spread over PROCESSES children pinned to core 1. */
    const connect = async (mode: 'provider' | 'grpc') => {
      const started = performance.now();
      const arrivals: Array<Array<{ at: number }>> = Array.from({ length: CHANGES + 1 }, () => []);
      const ready: Promise<void>[] = [];
      const group: ChildProcess[] = [];
      const per = Math.ceil(PROVIDERS / PROCESSES);
      for (let p = 0; p < PROCESSES; p++) {
        const count = Math.min(per, PROVIDERS - p * per);
        if (count <= 0) break;
        const script = path.join(ROOT, 'bench/flagd-sync-providers.ts');
        const child = fork(script, [String(syncPort), selector, String(count), String(p * per), FLAG, mode], {
          cwd: ROOT,
          execPath: fs.existsSync('/usr/bin/taskset') ? '/usr/bin/taskset' : process.execPath,
          execArgv: [...(fs.existsSync('/usr/bin/taskset') ? ['-c', '1', process.execPath] : []), '--import', 'tsx'],
          stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        });
        children.push(child);
        group.push(child);
        child.on('message', (m: { got?: Array<{ n: number; at: number }> }) => {
          for (const { n, at } of m.got ?? []) arrivals[n]?.push({ at });
        });
        ready.push(
          new Promise((resolve, reject) => {
            child.on('message', (m: { ready?: boolean }) => m.ready && resolve());
            child.once('exit', (code) => reject(new Error(`a provider process exited (${code}) before its providers were ready`)));
          }),
        );
      }
      await Promise.all(ready);
      return { group, arrivals, connectMs: performance.now() - started };
    };

    /** CHANGES changes, one at a time: each waits until every provider got it (or 10 s). */
    const changes = async (group: ChildProcess[], arrivals: Array<Array<{ at: number }>>, what: string) => {
      const fromSend: number[] = [];
      const fromAnswer: number[] = [];
      let missing = 0;
      for (let n = 1; n <= CHANGES; n++) {
        for (const child of group) child.send({ expect: n });
        await sleep(200); // the children have the expectation before the change can reach them
        const sent = wallNow();
        await admin('PATCH', flagUrl, rule(n));
        const answered = wallNow();
        const deadline = performance.now() + 10_000;
        while (arrivals[n]!.length < PROVIDERS && performance.now() < deadline) await sleep(20);
        missing += PROVIDERS - arrivals[n]!.length;
        for (const { at } of arrivals[n]!) {
          fromSend.push(at - sent);
          fromAnswer.push(at - answered);
        }
        await sleep(300);
      }
      const s = fromSend.sort((x, y) => x - y);
      const a = fromAnswer.sort((x, y) => x - y);
      return `${CHANGES} changes to ${PROVIDERS} ${what}: ${s.length} deliveries${missing ? `, ${missing} MISSING after 10 s` : ''}; from the PATCH's send p50 ${percentile(s, 50).toFixed(0)} ms, p99 ${percentile(s, 99).toFixed(0)} ms, max ${s.at(-1)?.toFixed(0)} ms (target p99 < 1000 ms); from its answer p50 ${percentile(a, 50).toFixed(0)} ms, p99 ${percentile(a, 99).toFixed(0)} ms, max ${a.at(-1)?.toFixed(0)} ms`;
    };

    const stop = async (group: ChildProcess[]) => {
      for (const child of group) child.send({ stop: true });
      await Promise.all(group.map((child) => (child.exitCode === null ? new Promise((r) => child.once('exit', r)) : undefined)));
    };

    const providers = await connect('provider');
    await sleep(2000);
    const rssWith = rssMb(server.pid!);
    const delivered = await changes(providers.group, providers.arrivals, 'flagd in-process providers');
    console.log(`1. ${delivered} (connected in ${(providers.connectMs / 1000).toFixed(1)} s)`);
    console.log(
      `2. server RSS ${rssWithout.rss.toFixed(0)} MB without providers, ${rssWith.rss.toFixed(0)} MB with ${PROVIDERS} connected (${(((rssWith.rss - rssWithout.rss) * 1024) / PROVIDERS).toFixed(0)} kB each; peak ${rssMb(server.pid!).peak.toFixed(0)} MB)`,
    );

    // Reads with the providers connected. Connecting 1,000 providers takes too long to alternate rounds,
    // so the rounds without them run before they connect and again after they are gone; the baseline is
    // the median of both sets.
    const withProviders: number[] = [];
    for (let i = 0; i < ROUNDS; i++) withProviders.push(wrk(slugUrl, keys).rps);
    await stop(providers.group);
    await sleep(1000);
    for (let i = 0; i < ROUNDS; i++) without.push(wrk(slugUrl, keys).rps);
    const rpsWith = median(withProviders);
    const rpsWithout = median(without);
    console.log(
      `3. GET /v1/flags/{slug}: ${rpsWith.toFixed(0)} req/s with ${PROVIDERS} providers connected vs ${rpsWithout.toFixed(0)} req/s without: ratio ${(rpsWith / rpsWithout).toFixed(2)} (target >= 0.8)`,
    );

    // The same changes to bare gRPC streams: the server's part of the delay, without every provider's
    // parse of the new definition (1,000 of them share one core here; in production each has its own host).
    const bare = await connect('grpc');
    await sleep(2000);
    console.log(`4. ${await changes(bare.group, bare.arrivals, 'bare grpc-js SyncFlags streams')}; load average now ${load()}`);
    await stop(bare.group);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.all(children.map((child) => (child.exitCode === null ? new Promise((r) => child.once('exit', r)) : undefined)));
    server.kill('SIGTERM');
    if (server.exitCode === null) await new Promise((r) => server.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
