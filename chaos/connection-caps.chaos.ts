import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { ADMIN_TOKEN } from '../test/support/context.ts';
import { ensureBuilt, freePort, ROOT, waitForHealth } from '../test/support/process.ts';

// Issue 29 items 8 and 9: idle HTTP/2 connections on the flagd sync port and OFREP event streams from
// many clients must not use up the process's descriptors. A real server process with 512 descriptors
// (`ulimit -n`) takes 400 idle sync connections and 300 event streams from 50 loopback addresses; it
// stays up, /healthz answers on a fresh connection, the caps hold, and the idle connections go.

const SYNC_CONNECTIONS = 400;
const STREAMS = 300;

it('stays up and answers /healthz under idle sync connections and event streams past the caps', { timeout: 180_000 }, async (t) => {
  const port = freePort();
  const syncPort = freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-caps-'));
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    PATH: process.env.PATH ?? '',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    FLAGPOST_DATA_DIR: dataDir,
    FLAGPOST_ADMIN_TOKEN: ADMIN_TOKEN,
    FLAGPOST_RATE_LIMIT_MAX: '0',
    FLAGPOST_FLAGD_SYNC_PORT: String(syncPort),
    FLAGPOST_FLAGD_SYNC_MAX_CONNECTIONS: '150',
    FLAGPOST_FLAGD_SYNC_MAX_CONNECTIONS_PER_CLIENT: '10',
    FLAGPOST_FLAGD_SYNC_IDLE_MS: '5000',
    FLAGPOST_MAX_STREAMS: '120',
    FLAGPOST_MAX_STREAMS_PER_CLIENT: '10',
  };
  // A shell lowers the descriptor limit, then becomes the server as `npm start` runs it (the bundle,
  // through src/boot.ts).
  ensureBuilt();
  const child = spawn('bash', ['-c', `ulimit -n 512 && exec "${process.execPath}" dist/main.js`], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (d) => (errors += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  await waitForHealth(port, 60_000);
  const base = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const project = (await (await fetch(`${base}/admin/v1/projects`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Caps' }) })).json()) as {
    key: string;
    environments: Array<{ key: string }>;
  };
  const bulk = await fetch(`${base}/ofrep/v1/evaluate/flags`, {
    method: 'POST',
    headers: { 'x-project-key': project.key, 'x-environment-key': project.environments[0]!.key, 'content-type': 'application/json' },
    body: '{}',
  });
  const uri = ((await bulk.json()) as { eventStreams: Array<{ endpoint: { requestUri: string } }> }).eventStreams[0]!.endpoint.requestUri;

  const address = (i: number) => `127.0.${10 + Math.floor(i / 250)}.${(i % 250) + 1}`;
  const sessions: http2.ClientHttp2Session[] = [];
  const requests: http.ClientRequest[] = [];
  t.after(() => {
    for (const s of sessions) s.destroy();
    for (const r of requests) r.destroy();
  });

  // 400 idle HTTP/2 connections to the sync port, 8 from each of 50 addresses.
  const syncOutcomes = await Promise.all(
    Array.from(
      { length: SYNC_CONNECTIONS },
      (_, i) =>
        new Promise<string>((resolve) => {
          const session = http2.connect(`http://127.0.0.1:${syncPort}`, { localAddress: address(i % 50) } as http2.SecureClientSessionOptions);
          sessions.push(session);
          session.on('error', () => resolve('error'));
          session.once('remoteSettings', () => resolve('accepted'));
          session.once('close', () => resolve('closed'));
        }),
    ),
  );
  // 300 event streams, 6 from each of 50 addresses.
  const streamStatuses = await Promise.all(
    Array.from(
      { length: STREAMS },
      (_, i) =>
        new Promise<number>((resolve) => {
          const req = http.get(`${base}${uri}`, { localAddress: address(i % 50), agent: false }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          requests.push(req);
          req.on('error', () => resolve(0));
        }),
    ),
  );
  const count = <T>(list: T[]) => Object.fromEntries([...new Set(list)].map((v) => [String(v), list.filter((x) => x === v).length]));
  t.diagnostic(`sync connections: ${JSON.stringify(count(syncOutcomes))}; event streams: ${JSON.stringify(count(streamStatuses))}`);
  assert.ok(syncOutcomes.filter((o) => o === 'accepted').length <= 150, 'at most FLAGPOST_FLAGD_SYNC_MAX_CONNECTIONS sync connections');
  assert.equal(streamStatuses.filter((s) => s === 200).length, 120, 'FLAGPOST_MAX_STREAMS streams open');
  assert.equal(streamStatuses.filter((s) => s === 503).length, STREAMS - 120, 'the rest refused with 503');

  const health = await fetch(`${base}/healthz`, { headers: { connection: 'close' } });
  assert.equal(health.status, 200, '/healthz answers on a fresh connection');
  const read = await fetch(`${base}/ofrep/v1/evaluate/flags`, {
    method: 'POST',
    headers: { 'x-project-key': project.key, 'x-environment-key': project.environments[0]!.key, 'content-type': 'application/json', connection: 'close' },
    body: '{}',
  });
  assert.equal(read.status, 200, 'evaluations still answer');

  // The idle sync connections are closed by the server.
  await Promise.all(sessions.map((s) => new Promise<void>((resolve) => (s.closed || s.destroyed ? resolve() : s.once('close', () => resolve())))));
  assert.equal(child.exitCode, null, `the process is still up ${errors}`);
  assert.equal((await fetch(`${base}/healthz`)).status, 200);
});
