import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { ensureBuilt } from '../test/support/process.ts';
import { cpuSeconds, ROOT } from './lib.ts';
import { median, pinned } from './wrk.ts';

// npm run bench:forms (issue 34): form intake (POST /v1/s/{formKey}?mode=rest, JSON, SQLite) of a form with
// field rules and every spam check on (duplicates, minimum fill time with a signed render timestamp,
// disposable e-mail domains, a rate limit that counts but never refuses, three targeting rules) against
// a form with none, on the same server, in alternating rounds. The server (the built bundle) runs on core
// 0, autocannon in this process on core 1 (package.json pins it). Prints submissions per second, the ratio
// of the medians (target: on/off >= 0.8) and the server's CPU per submission.

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const TOKEN = 'bench-admin-token-0123456789';
const port = 26_000 + Math.floor(Math.random() * 1000);
const base = `http://127.0.0.1:${port}`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-forms-'));

async function start(): Promise<ChildProcess> {
  // The server as `npm start` runs it: the bundle (dist/main.js, through src/boot.ts).
  ensureBuilt();
  const [command, args] = pinned(0, process.execPath, ['dist/main.js']);
  const child = spawn(command, args, {
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
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
    },
  });
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      if (i > 300) throw new Error('the server did not start');
    }
    await sleep(100);
  }
  return child;
}

async function createForm(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${base}/admin/v1/forms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench', ...body }),
  });
  if (!res.ok) throw new Error(`create form: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
}

async function load(formKey: string, extra: Record<string, string>): Promise<{ rps: number; non2xx: number }> {
  let n = 0;
  const result = await autocannon({
    url: `${base}/v1/s/${formKey}?mode=rest`,
    method: 'POST',
    connections: 20,
    duration: SECONDS,
    headers: { 'content-type': 'application/json' },
    // Each body differs (a counter in the message), as real submissions do.
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({
            email: 'ada@example.com',
            name: 'Ada Lovelace',
            topic: 'sales',
            message: `Hello number ${n++}, I would like to know more.`,
            ...extra,
          }),
        }),
      },
    ],
  });
  return { rps: result.requests.average, non2xx: result.non2xx };
}

const server = await start();
try {
  const plain = await createForm({});
  const checked = await createForm({
    fieldRules: {
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email', maxLength: 254 },
        name: { type: 'string', minLength: 1, maxLength: 100 },
        topic: { type: 'string', enum: ['sales', 'support'] },
        message: { type: 'string', minLength: 5, maxLength: 5000, pattern: '^[^<>]*$' },
      },
      required: ['email', 'message'],
      additionalProperties: false,
    },
    spamChecks: {
      duplicates: { enabled: true, windowMinutes: 60 },
      minFillSeconds: 1,
      disposableEmails: true,
      rateLimit: { perAddress: 100_000, perMinute: 1_000_000 },
      rules: [
        { attribute: 'message', operator: 'matches', values: ['(?i)\\b(casino|viagra|crypto)\\b'] },
        { attribute: 'country', operator: 'in', values: ['XX', 'YY'] },
        { attribute: 'request.ip', operator: 'inCidr', values: ['10.0.0.0/8'] },
      ],
    },
  });
  const rendered = (await (await fetch(`${base}/v1/s/${checked}/rendered`)).json()) as { field: string; token: string };
  await sleep(1100); // older than minFillSeconds: the submissions pass the fill-time check
  const off: number[] = [];
  const on: number[] = [];
  let refused = 0;
  await load(plain, {}); // warm-up
  // Server CPU per submission of each round too: the steadier figure on a shared machine (the server is
  // the bottleneck, so the ratio of rates and the inverse ratio of CPU per submission agree when it is quiet).
  const cpuOff: number[] = [];
  const cpuOn: number[] = [];
  const measured = async (formKey: string, extra: Record<string, string>, cpu: number[]) => {
    const before = cpuSeconds(server.pid!);
    const result = await load(formKey, extra);
    cpu.push(((cpuSeconds(server.pid!) - before) / (result.rps * SECONDS)) * 1e6);
    return result;
  };
  for (let i = 0; i < ROUNDS; i++) {
    const a = await measured(plain, {}, cpuOff);
    const b = await measured(checked, { _flagpost_rendered: rendered.token }, cpuOn);
    refused += a.non2xx + b.non2xx;
    off.push(a.rps);
    on.push(b.rps);
  }
  const ratio = median(on) / median(off);
  console.log(`form intake, checks off: ${median(off).toFixed(0)} submissions/s (rounds ${off.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`form intake, field rules and spam checks on: ${median(on).toFixed(0)} submissions/s (rounds ${on.map((x) => x.toFixed(0)).join(', ')})`);
  console.log(`ratio on/off: ${ratio.toFixed(2)} (target >= 0.8)${refused > 0 ? `; ${refused} answers were not 2xx` : ''}`);
  console.log(
    `server CPU per submission: ${median(cpuOff).toFixed(0)} us off, ${median(cpuOn).toFixed(0)} us on (medians): ratio off/on ${(median(cpuOff) / median(cpuOn)).toFixed(2)}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  server.kill();
  fs.rmSync(dir, { recursive: true, force: true });
}
