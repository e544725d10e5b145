import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBuilt } from '../test/support/process.ts';
import { adminClient, ROOT } from './lib.ts';
import { ab as ab_, median, pinned, rssMb, type Wrk, wrk as wrk_, type WrkTarget } from './wrk.ts';

// npm run bench:ofrep (issue 10): OFREP and live updates against Flagpost's own /v1 reads, in one run.
// The server runs on core 0 and the load (wrk, and this process holding the event streams) on core 1,
// so that the two do not share a core. Ratios are of medians over alternating rounds.
//   1. OFREP bulk evaluation of 20 flags against GET /v1/flags of the same environment.
//   2. GET /v1/flags with 1,000 flags: bytes per answer and requests per second, identity, gzip, brotli.
//   3. 10,000 open event streams: server RSS, delivery of one change to all of them (p50, p99), and
//      single-flag read throughput with the streams open against the same reads without them.

const ROUNDS = 3;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000);
const TOKEN = 'bench-admin-token-0123456789';
// Below the ephemeral range (32768 and up), where the many client sockets of a run never take it.
const port = 24_000 + Math.floor(Math.random() * 1000);
const base = `http://127.0.0.1:${port}`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-ofrep-'));
const wrk = (url: string, options: WrkTarget, seconds = SECONDS, connections = 50) => wrk_(dir, url, options, seconds, connections);
const ab = (a: () => Wrk, b: () => Wrk) => ab_(ROUNDS, a, b);

const admin = adminClient(base, TOKEN);

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
      FLAGPOST_MAX_STREAMS_PER_CLIENT: String(STREAMS + 100),
      FLAGPOST_MAX_CONNECTIONS: String(STREAMS + 1000),
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
    const small = (await admin('POST', '/admin/v1/projects', { name: 'Twenty' })) as { key: string; environments: Array<{ key: string }> };
    const large = (await admin('POST', '/admin/v1/projects', { name: 'Thousand' })) as { key: string; environments: Array<{ key: string }> };
    for (let i = 0; i < 20; i++) {
      await admin('POST', `/admin/v1/projects/${small.key}/flags`, {
        slug: `flag-${i}`,
        enabled: i % 2 === 0,
        description: `Flag ${i} of the web shop`,
        payload: { variant: i },
      });
    }
    for (let i = 0; i < 1000; i += 1) {
      await admin('POST', `/admin/v1/projects/${large.key}/flags`, {
        slug: `flag-${String(i).padStart(4, '0')}`,
        enabled: i % 3 === 0,
        description: `Flag number ${i}`,
      });
    }
    const smallKeys = { 'x-project-key': small.key, 'x-environment-key': small.environments[2]!.key };
    const largeKeys = { 'x-project-key': large.key, 'x-environment-key': large.environments[2]!.key };
    const lines: string[] = [];
    console.log(`machine: ${os.availableParallelism()} cores, ${os.cpus()[0]?.model}, Node ${process.version}; wrk -t1 -c50, ${SECONDS} s x ${ROUNDS} rounds`);

    // 1. OFREP bulk against GET /v1/flags, 20 flags, warm.
    const bulkBody = '{"context":{"targetingKey":"user-1"}}';
    const ofrepTarget = { method: 'POST', headers: { ...smallKeys, 'content-type': 'application/json' }, body: bulkBody };
    wrk(`${base}/v1/flags`, { headers: smallKeys }, 2);
    wrk(`${base}/ofrep/v1/evaluate/flags`, ofrepTarget, 2);
    const bulk = ab(
      () => wrk(`${base}/ofrep/v1/evaluate/flags`, ofrepTarget),
      () => wrk(`${base}/v1/flags`, { headers: smallKeys }),
    );
    const say = (line: string) => {
      lines.push(line);
      console.log(line);
    };
    const bodiless = median([0, 1, 2].map(() => wrk(`${base}/ofrep/v1/evaluate/flags`, { method: 'POST', headers: smallKeys }).rps));
    say(
      `1. OFREP bulk (20 flags): ${bulk.a.rps.toFixed(0)} req/s (p99 ${bulk.a.p99} ms) vs GET /v1/flags ${bulk.b.rps.toFixed(0)} req/s (p99 ${bulk.b.p99} ms): ratio ${(bulk.a.rps / bulk.b.rps).toFixed(2)} (target >= 0.8); without a body: ${bodiless.toFixed(0)} req/s (${(bodiless / bulk.b.rps).toFixed(2)})`,
    );
    if (process.env.BENCH_ONLY === 'bulk') return;

    // 2. Compressed answers of 1,000 flags.
    const sizes: Record<string, number> = {};
    for (const encoding of ['identity', 'gzip', 'br']) {
      const res = await new Promise<{ bytes: number; encoding: string | undefined }>((resolve, reject) =>
        http
          .get(`${base}/v1/flags`, { headers: { ...largeKeys, 'accept-encoding': encoding } }, (r) => {
            let bytes = 0;
            r.on('data', (c: Buffer) => (bytes += c.length));
            r.on('end', () => resolve({ bytes, encoding: r.headers['content-encoding'] }));
          })
          .on('error', reject),
      );
      sizes[encoding] = res.bytes;
    }
    const identity = median([0, 1, 2].map(() => wrk(`${base}/v1/flags`, { headers: largeKeys }).rps));
    const gzip = median([0, 1, 2].map(() => wrk(`${base}/v1/flags`, { headers: { ...largeKeys, 'accept-encoding': 'gzip' } }).rps));
    const br = median([0, 1, 2].map(() => wrk(`${base}/v1/flags`, { headers: { ...largeKeys, 'accept-encoding': 'br' } }).rps));
    say(
      `2. GET /v1/flags, 1,000 flags: identity ${sizes.identity} B at ${identity.toFixed(0)} req/s; gzip ${sizes.gzip} B (${(sizes.identity! / sizes.gzip!).toFixed(1)}x smaller) at ${gzip.toFixed(0)} req/s (${(gzip / identity).toFixed(2)}); brotli ${sizes.br} B (${(sizes.identity! / sizes.br!).toFixed(1)}x smaller) at ${br.toFixed(0)} req/s (${(br / identity).toFixed(2)})`,
    );

    // 3. 10,000 event streams.
    const slugUrl = `${base}/v1/flags/flag-3`;
    wrk(slugUrl, { headers: smallKeys }, 2);
    const before = median([0, 1, 2].map(() => wrk(slugUrl, { headers: smallKeys }).rps));
    const rssBefore = rssMb(server.pid!);
    // A fresh connection: the pooled ones may have been closed by the server while wrk ran.
    const bulkAnswer = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        `${base}/ofrep/v1/evaluate/flags`,
        { method: 'POST', agent: false, headers: { ...smallKeys, 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    const { eventStreams } = JSON.parse(bulkAnswer) as { eventStreams: Array<{ endpoint: { requestUri: string } }> };
    const streamUrl = base + eventStreams[0]!.endpoint.requestUri;
    let changeAt = 0;
    const delivered: number[] = [];
    let open = 0;
    const requests: http.ClientRequest[] = [];
    await new Promise<void>((resolve, reject) => {
      let started = 0;
      const next = () => {
        // A few hundred connections at a time, so the listen backlog never overflows.
        while (started < STREAMS && started - open < 200) {
          started++;
          const req = http.get(streamUrl, { agent: false }, (res) => {
            if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
            open++;
            let seen = false;
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              if (!seen && changeAt > 0 && chunk.includes('refetchEvaluation')) {
                seen = true;
                delivered.push(performance.now() - changeAt);
              }
            });
            if (open === STREAMS) resolve();
            else next();
          });
          req.on('error', reject);
          requests.push(req);
        }
      };
      next();
    });
    await sleep(1000);
    const rssWith = rssMb(server.pid!);
    changeAt = performance.now();
    await admin('PATCH', `/admin/v1/projects/${small.key}/environments/${small.environments[2]!.key}/flags/flag-0`, { enabled: false });
    for (let i = 0; i < 100 && delivered.length < STREAMS; i++) await sleep(100);
    const sorted = [...delivered].sort((a, b) => a - b);
    const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
    const withStreams = median([0, 1, 2].map(() => wrk(slugUrl, { headers: smallKeys }).rps));
    say(
      `3. ${open} open event streams: server RSS ${rssBefore.rss.toFixed(0)} MB before, ${rssWith.rss.toFixed(0)} MB with them (peak ${rssMb(server.pid!).peak.toFixed(0)} MB; target < 300 MB); one change delivered to ${delivered.length} of them, p50 ${at(50).toFixed(0)} ms, p99 ${at(99).toFixed(0)} ms, last ${sorted.at(-1)?.toFixed(0)} ms (target p99 < 1000 ms); GET /v1/flags/{slug} ${withStreams.toFixed(0)} req/s with the streams open vs ${before.toFixed(0)} without: ratio ${(withStreams / before).toFixed(2)} (target >= 0.8)`,
    );
    for (const req of requests) req.destroy();
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
