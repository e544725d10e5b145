import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { type Load, abRounds, fmt, load, peakRssMb, ROOT, rounds, type Server, startServer, table, type Target } from './lib.ts';
import { multipartBody, seed } from './seed.ts';

// npm run bench: Flagpost on SQLite with a realistic data set against the ceilings of this machine.
// Method and latest figures: docs/performance.md. Every server is a child process; autocannon runs here.

const ROUNDS = 3;
const SECONDS = 4;
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-'));
// Below the ephemeral range (32768 and up), where the client sockets of autocannon never take them.
const ports = { flagpost: 21_000 + Math.floor(Math.random() * 1000), bare: 0, baseline: 0 };
ports.bare = ports.flagpost + 1;
ports.baseline = ports.flagpost + 2;
const flagpostEnv = {
  PORT: String(ports.flagpost),
  HOST: '127.0.0.1',
  FLAGPOST_DATA_DIR: path.join(dir, 'flagpost'),
  FLAGPOST_ADMIN_TOKEN: ADMIN_TOKEN,
  // Raised, not switched off: the counter still runs on every request, as in production (contract D20).
  FLAGPOST_RATE_LIMIT_MAX: '1000000000',
  // Every bench client is 127.0.0.1: the per-client cap on uploads under way would refuse the
  // 50 concurrent uploads the memory scenario is about (the global FLAGPOST_MAX_CONCURRENT_UPLOADS
  // still bounds memory).
  FLAGPOST_MAX_UPLOADS_PER_CLIENT: '1000',
};
const servers: Server[] = [];
const startFlagpost = (headers: Record<string, string> = {}, url = '/healthz') =>
  startServer('flagpost', 'dist/main.js', [], flagpostEnv, (port) => `http://127.0.0.1:${port}${url}`, headers);

async function main() {
  const began = performance.now();
  // Flagpost runs as `npm start` runs it: the esbuild bundle of src/ (package.json "build").
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  let { server: flagpost } = await startFlagpost();
  servers.push(flagpost);
  const base = `http://127.0.0.1:${ports.flagpost}`;
  const data = await seed(base, ADMIN_TOKEN);
  const small = { 'x-project-key': data.small.projectKey, 'x-environment-key': data.small.environmentKey };
  const large = { 'x-project-key': data.large.projectKey, 'x-environment-key': data.large.environmentKey };
  const slugPath = `/v1/flags/${data.small.slug}`;

  // The bare server answers with Flagpost's own bytes and headers (minus those node:http adds itself).
  const spec: Record<string, unknown> = {};
  const etags: Record<string, string> = {};
  for (const [p, headers] of [
    [slugPath, small],
    ['/v1/flags', small],
    ['/v1/flags?large', large],
  ] as const) {
    // Identity, as autocannon asks: fetch asks for gzip and hands back the decoded bytes beside the encoded
    // answer's Content-Length and Content-Encoding, which the bare server then sent (13 req/s for the lists).
    const res = await fetch(base + p.replace('?large', ''), { headers: { ...headers, 'accept-encoding': 'identity' } });
    const body = Buffer.from(await res.arrayBuffer());
    etags[p] = res.headers.get('etag')!;
    const kept = [...res.headers].filter(([name]) => !['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name));
    spec[p] = { status: res.status, headers: kept, body: body.toString('base64') };
  }
  fs.writeFileSync(path.join(dir, 'bare.json'), JSON.stringify(spec));
  const { server: bare } = await startServer(
    'bare',
    'bench/servers/bare-http.ts',
    [path.join(dir, 'bare.json')],
    { PORT: String(ports.bare) },
    (port) => `http://127.0.0.1:${port}/`,
  );
  servers.push(bare);
  fs.mkdirSync(path.join(dir, 'baseline'));
  const { server: baseline } = await startServer(
    'baseline',
    'bench/servers/baseline-forms.ts',
    [path.join(dir, 'baseline')],
    { PORT: String(ports.baseline) },
    (port) => `http://127.0.0.1:${port}/`,
  );
  servers.push(baseline);

  const bareUrl = `http://127.0.0.1:${ports.bare}`;
  const results: Record<string, unknown> = {};
  const rows: string[][] = [['Scenario', 'Flagpost req/s', 'p50 ms', 'p99 ms', 'Reference req/s', 'Ratio', 'Target', 'Met']];
  const pair = (name: string, fp: Load, ref: Load | undefined, target?: { ratio?: number; p99?: number }) => {
    const ratio = ref ? fp.rps / ref.rps : undefined;
    const met = target ? (target.ratio === undefined || (ratio ?? 0) >= target.ratio) && (target.p99 === undefined || fp.p99 < target.p99) : undefined;
    const goal = target
      ? [target.ratio !== undefined ? `>= ${target.ratio}` : '', target.p99 !== undefined ? `p99 < ${target.p99} ms` : ''].filter(Boolean).join(', ')
      : '';
    rows.push([
      name,
      fmt.int(fp.rps),
      fmt.ms(fp.p50),
      fmt.ms(fp.p99),
      ref ? `${fmt.int(ref.rps)} (p99 ${fmt.ms(ref.p99)})` : '',
      ratio ? fmt.ratio(ratio) : '',
      goal,
      met === undefined ? '' : met ? 'yes' : 'NO',
    ]);
    results[name] = { flagpost: fp, reference: ref, ratio, target, met };
    if (fp.errors > 0 || (fp.non2xx > 0 && !name.includes('If-None-Match')))
      process.stderr.write(`warning: ${name}: ${fp.errors} errors, ${fp.non2xx} non-2xx\n`);
  };
  const get = (url: string, headers: Record<string, string>): Target => ({ url, headers });

  // Both servers warm before the first measured round: JIT, snapshot loads, and the garbage the seeding left.
  for (const [url, headers] of [
    [base + slugPath, small],
    [`${base}/v1/flags`, small],
    [`${base}/v1/flags`, large],
    [bareUrl + slugPath, {}],
  ] as const) {
    await load(get(url, headers), 2);
  }
  const slug = await abRounds(get(base + slugPath, small), get(bareUrl + slugPath, {}), ROUNDS, SECONDS);
  pair(`GET /v1/flags/{slug}`, slug.a, slug.b, { ratio: 0.85, p99: 5 });
  const list = await abRounds(get(`${base}/v1/flags`, small), get(`${bareUrl}/v1/flags`, {}), ROUNDS, SECONDS);
  pair('GET /v1/flags (20 flags)', list.a, list.b, { ratio: 0.8 });
  const list1000 = await abRounds(get(`${base}/v1/flags`, large), get(`${bareUrl}/v1/flags?large`, {}), ROUNDS, SECONDS);
  pair('GET /v1/flags (1,000 flags)', list1000.a, list1000.b);
  pair('GET /v1/flags (20) If-None-Match', await rounds(get(`${base}/v1/flags`, { ...small, 'if-none-match': etags['/v1/flags']! }), 2, SECONDS), undefined);
  pair(
    'GET /v1/flags (1,000) If-None-Match',
    await rounds(get(`${base}/v1/flags`, { ...large, 'if-none-match': etags['/v1/flags?large']! }), 2, SECONDS),
    undefined,
  );
  pair('GET /v1/flags/preview', await rounds(get(`${base}/v1/flags/preview`, small), 2, SECONDS), undefined);

  let durability: Record<string, unknown> = { skipped: 'the form endpoint does not exist' };
  let multipart: Record<string, unknown> = durability;
  // BENCH_ONLY=reads skips the form scenarios and the start-up runs (for quick iterations on reads).
  if (data.formKey && process.env.BENCH_ONLY !== 'reads') {
    const json = JSON.stringify({ email: 'ada@example.com', name: 'Ada Lovelace', message: 'Hello from the benchmark', plan: 'pro' });
    const formHeaders = { 'content-type': 'application/json', accept: 'application/json' };
    const submit: Target = { url: `${base}/v1/s/${data.formKey}?mode=rest`, method: 'POST', headers: formHeaders, body: json };
    const baselineSubmit: Target = {
      url: `http://127.0.0.1:${ports.baseline}/v1/s/${data.formKey}?mode=rest`,
      method: 'POST',
      headers: formHeaders,
      body: json,
    };
    const forms = await abRounds(submit, baselineSubmit, ROUNDS, SECONDS);
    pair('POST /v1/s/{key} JSON (committed)', forms.a, forms.b, { ratio: 0.6 });
    durability = checkDurability(forms.a, forms.b);

    // A fresh process for start-up time and for a peak RSS that belongs to the uploads alone.
    await flagpost.stop();
    servers.splice(servers.indexOf(flagpost), 1);
    const startups: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = await startFlagpost(small, slugPath);
      startups.push(started.startedMs);
      flagpost = started.server;
      if (i < 2) await flagpost.stop();
    }
    servers.push(flagpost);
    results.startupMs = { runs: startups, median: startups.sort((x, y) => x - y)[1] };
    const upload = multipartBody(5, 1024 * 1024);
    const rssBefore = peakRssMb(flagpost.child.pid!);
    const uploads = await load(
      {
        url: `${base}/v1/s/${data.formKey}?mode=rest`,
        method: 'POST',
        headers: { 'content-type': upload.contentType, accept: 'application/json' },
        body: upload.body,
      },
      10,
      50,
    );
    const peak = peakRssMb(flagpost.child.pid!);
    multipart = { ...uploads, fileMbPerSec: (uploads.ok / 10) * 5 * 1.048576, peakRssMb: peak, peakRssBeforeMb: rssBefore };
    rows.push([
      '50 concurrent uploads, 5 x 1 MiB',
      fmt.int(uploads.rps),
      fmt.ms(uploads.p50),
      fmt.ms(uploads.p99),
      `${(multipart.fileMbPerSec as number).toFixed(1)} MB/s of files`,
      '',
      'peak RSS < 300 MB',
      `${peak?.toFixed(0)} MB: ${peak !== undefined && peak < 300 ? 'yes' : 'NO'}`,
    ]);
    const median = (results.startupMs as { median: number }).median;
    rows.push([
      'Start-up to first flag answer',
      '',
      '',
      '',
      `${startups.map((s) => s.toFixed(0)).join(', ')} ms`,
      '',
      '< 1000 ms (median)',
      `${median.toFixed(0)} ms: ${median < 1000 ? 'yes' : 'NO'}`,
    ]);
  } else if (!data.formKey) {
    process.stderr.write('The form endpoint (POST /admin/v1/forms) does not exist yet: form scenarios skipped.\n');
  }

  const machine = {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model,
    memoryGb: Math.round(os.totalmem() / 1e9),
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
  };
  const output = {
    date: new Date().toISOString(),
    machine,
    connections: 50,
    rounds: ROUNDS,
    secondsPerRound: SECONDS,
    results,
    durability,
    multipart,
    totalSeconds: (performance.now() - began) / 1000,
  };
  fs.writeFileSync(path.join(ROOT, 'bench', 'results.json'), `${JSON.stringify(output, null, 2)}\n`);
  process.stdout.write(`\nFlagpost benchmark, ${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}, 50 connections\n\n${table(rows)}\n\n`);
  process.stdout.write(`Durability: ${JSON.stringify(durability)}\nMultipart: ${JSON.stringify(multipart)}\n`);
  process.stdout.write(`Total ${output.totalSeconds.toFixed(0)} s; results in bench/results.json\n`);

  function checkDurability(fp: Load, ref: Load) {
    const count = (file: string, table: string) => {
      const db = new SQLite(file, { readonly: true });
      try {
        return (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    const flagpostRows = count(path.join(dir, 'flagpost', 'flagpost.db'), 'submissions');
    const baselineRows = count(path.join(dir, 'baseline', 'baseline.db'), 'submissions');
    // Warm-up requests are committed too, so the tables hold at least every answered 2xx.
    const ok = flagpostRows >= fp.ok && baselineRows >= ref.ok;
    if (!ok) process.stderr.write(`DURABILITY FAILURE: flagpost ${flagpostRows} rows for ${fp.ok} answers\n`);
    return { flagpostAnswered: fp.ok, flagpostRows, baselineAnswered: ref.ok, baselineRows, everyAnswerCommitted: ok };
  }
}

main()
  .catch((error) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const server of servers) await server.stop().catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  });
