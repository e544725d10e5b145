import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createTestContext, type TestContext } from '../support/context.ts';
import { freePort } from '../support/process.ts';

// Issue 29 item 9: OFREP event streams have a total cap per process (503 with Retry-After, so that
// /healthz and the reads keep their connections) and a maximum age, after which the stream ends with a
// short reconnection delay (providers reconnect). Real sockets on loopback; 127.0.0.2 and 127.0.0.3
// are other clients.

interface Opened {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Everything received until the stream ended. */
  ended: Promise<string>;
  close(): void;
}

function openStream(url: string, localAddress: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { localAddress, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      const ended = new Promise<string>((done) => res.on('close', () => done(body)));
      resolve({ status: res.statusCode!, headers: res.headers, ended, close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}

async function streamUri(ctx: TestContext): Promise<string> {
  const project = (await ctx.admin('POST', '/admin/v1/projects', { name: 'Shop' })).json() as { key: string; environments: Array<{ key: string }> };
  await ctx.admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'checkout' });
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/ofrep/v1/evaluate/flags',
    headers: { 'x-project-key': project.key, 'x-environment-key': project.environments[0]!.key, 'content-type': 'application/json' },
    payload: '{}',
  });
  return (res.json() as { eventStreams: Array<{ endpoint: { requestUri: string } }> }).eventStreams[0]!.endpoint.requestUri;
}

async function listening(ctx: TestContext): Promise<string> {
  const port = freePort();
  await ctx.app.listen({ port, host: '127.0.0.1' });
  return `http://127.0.0.1:${port}`;
}

describe('OFREP event streams: the total cap (issue 29)', () => {
  let ctx: TestContext;
  let base: string;
  let uri: string;

  before(async () => {
    ctx = await createTestContext('sqlite', { FLAGPOST_MAX_STREAMS: '4', FLAGPOST_MAX_STREAMS_PER_CLIENT: '3', FLAGPOST_STREAM_MAX_AGE_MS: '3600000' });
    base = await listening(ctx);
    uri = await streamUri(ctx);
  });
  after(async () => ctx?.close());

  it('answers 503 with Retry-After past the total, while /healthz and the reads still answer', { timeout: 20_000 }, async () => {
    const open = [
      await openStream(base + uri, '127.0.0.1'),
      await openStream(base + uri, '127.0.0.1'),
      await openStream(base + uri, '127.0.0.1'),
      await openStream(base + uri, '127.0.0.2'),
    ];
    assert.deepEqual(
      open.map((s) => s.status),
      [200, 200, 200, 200],
    );
    const fifth = await openStream(base + uri, '127.0.0.3');
    assert.equal(fifth.status, 503);
    assert.ok(Number(fifth.headers['retry-after']) > 0);
    assert.deepEqual(JSON.parse(await fifth.ended), { errorCode: 'GENERAL', errorDetails: 'Too many open event streams on this server' });
    const ownShare = await openStream(base + uri, '127.0.0.1');
    assert.equal(ownShare.status, 429, 'a client over its own share still hears 429');
    await ownShare.ended;

    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    const last = open.pop()!;
    last.close();
    await last.ended;
    while (ctx.services.streams.size > 3) await new Promise((r) => setTimeout(r, 20));
    const freed = await openStream(base + uri, '127.0.0.3');
    assert.equal(freed.status, 200, 'a closed stream frees its place');
    freed.close();
    for (const s of open) s.close();
  });
});

describe('OFREP event streams: the maximum age (issue 29)', () => {
  let ctx: TestContext;
  let base: string;
  let uri: string;

  before(async () => {
    ctx = await createTestContext('sqlite', { FLAGPOST_STREAM_MAX_AGE_MS: '1000' });
    base = await listening(ctx);
    uri = await streamUri(ctx);
  });
  after(async () => ctx?.close());

  it('ends a stream at its age with a short reconnection delay', { timeout: 30_000 }, async () => {
    const stream = await openStream(base + uri, '127.0.0.1');
    assert.equal(stream.status, 200);
    const received = await stream.ended;
    assert.match(received, /retry: \d+\n\n$/, 'the last block tells the client when to reconnect');
    assert.equal(ctx.services.streams.size, 0);
  });
});
