import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBuilt } from '../test/support/process.ts';
import { adminClient, cpuSeconds, ROOT } from './lib.ts';
import { median, pinned, type Wrk, wrk as wrk_, type WrkTarget } from './wrk.ts';

// npm run bench:releases (issue 33): what an active release costs a single-flag OFREP evaluation. CPU per
// request (the server process's CPU time over the requests wrk made) of a flag with an active release
// (split 50/50, a metric guardrail, its guard checking every FLAGPOST_RELEASE_CHECK_MS) against the same
// flag with a plain 50/50 split, in alternating rounds. Both run while 10,000 users a minute are tracked:
// the evaluations cycle over 10,000 targeting keys at wrk's rate, and a pacer process sends those users'
// `/v1/track` events at 10,000 users a minute. The server runs on core 0 (taskset), wrk and the pacer on core 1.

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const USERS = 10_000;
const CHECK_MS = Number(process.env.BENCH_RELEASE_CHECK_MS ?? 2000);
const TOKEN = 'bench-admin-token-0123456789';
const port = 25_000 + Math.floor(Math.random() * 1000);
const base = `http://127.0.0.1:${port}`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-releases-'));
const wrk = (url: string, options: WrkTarget) => wrk_(dir, url, options, SECONDS, 50);
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
        { variant: 'on', weight: 50 },
        { variant: 'off', weight: 50 },
      ],
    },
  },
};

// The pacer: 10,000 users a minute send an event each (one user in 20 an error), in a batch every 100 ms.
const pacerSource = `
  const [url, projectKey, environmentKey, users] = process.argv.slice(1);
  const headers = { 'x-project-key': projectKey, 'x-environment-key': environmentKey, 'content-type': 'application/json' };
  const perMs = Number(users) / 60000;
  const started = Date.now();
  let sent = 0;
  let stop = false;
  process.on('SIGTERM', () => (stop = true));
  (async () => {
    while (!stop) {
      const due = Math.floor((Date.now() - started) * perMs);
      const events = [];
      while (sent < due) {
        const user = sent++ % Number(users);
        events.push({ kind: 'track', name: user % 20 === 0 ? 'error' : 'view', targetingKey: 'u' + user });
      }
      if (events.length > 0) await fetch(url, { method: 'POST', headers, body: JSON.stringify({ events }) }).then((r) => r.arrayBuffer());
      await new Promise((r) => setTimeout(r, 100));
    }
    console.log(String((sent / ((Date.now() - started) / 1000)) * 60));
    process.exit(0);
  })();`;

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
      FLAGPOST_RELEASE_CHECK_MS: String(CHECK_MS),
    },
  });
  let pacer: ChildProcess | undefined;
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        if (i > 100) throw new Error('the server did not start');
      }
      await sleep(100);
    }
    const project = (await admin('POST', '/admin/v1/projects', { name: 'Releases' })) as { key: string; environments: Array<{ key: string }> };
    const env = project.environments[0]!.key;
    await admin('POST', `/admin/v1/projects/${project.key}/metrics`, {
      key: 'error-rate',
      name: 'Error rate',
      event: 'error',
      type: 'proportion',
      direction: 'decrease',
    });
    for (const slug of ['released', 'plain']) await admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug, enabled: false });
    for (let i = 0; i < 20; i++) await admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: `flag-${i}`, enabled: i % 2 === 0 });
    await admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env}/flags/plain`, { rules: [split] });
    const release = (await admin('POST', `/admin/v1/projects/${project.key}/environments/${env}/flags/released/releases`, {
      variant: 'on',
      baseline: 'off',
      steps: [{ percent: 50, holdSeconds: 86_400 }, { percent: 100 }],
      guardrails: [{ metric: 'error-rate', minUsers: 100 }],
    })) as { id: string; percent: number };

    const [pacerCommand, pacerArgs] = pinned(1, process.execPath, ['-e', pacerSource, `${base}/v1/track`, project.key, env, String(USERS)]);
    pacer = spawn(pacerCommand, pacerArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
    let pacerOut = '';
    pacer.stdout!.on('data', (chunk: Buffer) => (pacerOut += chunk.toString()));
    const pacerExited = new Promise((resolve) => pacer!.on('exit', resolve));

    const ofrep: WrkTarget = {
      method: 'POST',
      headers: { 'x-project-key': project.key, 'x-environment-key': env, 'content-type': 'application/json' },
      request: `n = ((n or 0) + 1) % ${USERS}\nreturn wrk.format(nil, nil, nil, '{"context":{"targetingKey":"u' .. n .. '"}}')`,
    };
    const cpuPerRequest = (flag: string): Wrk => {
      const before = cpuSeconds(server.pid!);
      const result = wrk(`${base}/ofrep/v1/evaluate/flags/${flag}`, ofrep);
      const cpu = cpuSeconds(server.pid!) - before;
      return { ...result, p50: (cpu / (result.rps * SECONDS)) * 1e6 };
    };
    // A warm-up of both (JIT, the users' first exposures), then alternating rounds.
    wrk(`${base}/ofrep/v1/evaluate/flags/released`, ofrep);
    wrk(`${base}/ofrep/v1/evaluate/flags/plain`, ofrep);
    const released: Wrk[] = [];
    const plain: Wrk[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      released.push(cpuPerRequest('released'));
      plain.push(cpuPerRequest('plain'));
    }
    pacer.kill('SIGTERM');
    await pacerExited;
    const view = (await admin('GET', `/admin/v1/projects/${project.key}/environments/${env}/flags/released/releases/${release.id}`)) as {
      status: string;
      guardrails: Array<{ state: string; users?: Record<string, number> }>;
    };
    const cpuReleased = median(released.map((r) => r.p50));
    const cpuPlain = median(plain.map((r) => r.p50));
    const rps = (runs: Wrk[]) => Math.round(median(runs.map((r) => r.rps)));
    const non2xx = [...released, ...plain].reduce((n, r) => n + r.non2xx, 0);
    console.log(
      `machine: ${os.availableParallelism()} cores, ${os.cpus()[0]?.model}, Node ${process.version}; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}; wrk -t1 -c50, ${SECONDS} s x ${ROUNDS} rounds each, alternating; guard every ${CHECK_MS} ms`,
    );
    console.log(
      `tracked: ${Math.round(Number(pacerOut.trim()))} users a minute by /v1/track; evaluations over ${USERS} targeting keys; the release: ${view.status}, guardrail ${view.guardrails[0]?.state} with users ${JSON.stringify(view.guardrails[0]?.users ?? {})}`,
    );
    console.log(
      `OFREP single flag, CPU per request (median of ${ROUNDS}): ${cpuReleased.toFixed(1)} us with an active release, ${cpuPlain.toFixed(1)} us with a plain split: ratio ${(cpuReleased / cpuPlain).toFixed(3)} (target <= 1.05); ${rps(released)} vs ${rps(plain)} req/s; non-2xx ${non2xx}`,
    );
    console.log(`rounds, us per request: release ${released.map((r) => r.p50.toFixed(1)).join(' ')}; plain ${plain.map((r) => r.p50.toFixed(1)).join(' ')}`);
  } finally {
    pacer?.kill('SIGTERM');
    server.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
