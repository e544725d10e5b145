import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, dialects, startInstance, type TestDatabase } from '../support/context.ts';
import { freePort } from '../support/process.ts';

// Issue 10: live updates. A change of a flag reaches every event stream of its environment as one
// OFREP refetchEvaluation event carrying the new bulk ETag, on the instance that made it and (on
// PostgreSQL) on the others; heartbeats, Last-Event-ID, the per-client cap and shutdown.

interface Stream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Waits for the next block (event or comment) that `match` accepts. */
  next(match: (block: string) => boolean, timeoutMs?: number): Promise<string>;
  ended: Promise<void>;
  close(): void;
}

function openStream(url: string, headers: Record<string, string> = {}): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      const blocks: string[] = [];
      let buffer = '';
      let wake: (() => void) | undefined;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          blocks.push(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
        wake?.();
      });
      const ended = new Promise<void>((done) => res.on('close', () => done()));
      resolve({
        status: res.statusCode!,
        headers: res.headers,
        ended,
        close: () => req.destroy(),
        async next(match, timeoutMs = 5000) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const i = blocks.findIndex(match);
            if (i !== -1) return blocks.splice(0, i + 1).pop()!;
            if (Date.now() > deadline) throw new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(blocks)}`);
            await new Promise<void>((r) => {
              wake = r;
              setTimeout(r, 50);
            });
          }
        },
      });
    });
    req.on('error', reject);
  });
}

const dataOf = (block: string) => JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as { type: string; etag?: string; lastModified?: number };
const isEvent = (block: string) => /^data: /m.test(block);

for (const dialect of dialects()) {
  describe(`OFREP event streams [${dialect}]`, () => {
    let database: TestDatabase;
    let a: Awaited<ReturnType<typeof startInstance>>;
    let b: Awaited<ReturnType<typeof startInstance>> | undefined;
    let baseA: string;
    let baseB: string | undefined;
    let project: { key: string; environments: Array<{ key: string; name: string }> };
    const env = { FLAGPOST_STREAM_HEARTBEAT_MS: '300', FLAGPOST_MAX_STREAMS_PER_CLIENT: '3' };

    const admin = (method: 'POST' | 'PATCH', url: string, body: unknown) =>
      a.app.inject({
        method,
        url,
        headers: { authorization: 'Bearer test-admin-token-0123456789', 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    const keys = () => ({ 'x-project-key': project.key, 'x-environment-key': project.environments[2]!.key, 'content-type': 'application/json' });
    const bulk = async (base: string) => {
      const res = await fetch(`${base}/ofrep/v1/evaluate/flags`, { method: 'POST', headers: keys(), body: '{}' });
      const body = (await res.json()) as { eventStreams: Array<{ endpoint: { requestUri: string } }>; flags: Array<{ key: string; value?: unknown }> };
      return { etag: res.headers.get('etag')!, uri: body.eventStreams[0]!.endpoint.requestUri, flags: body.flags };
    };
    /** The environment's configuration version as an instance holds it: what its events announce. */
    const versionOn = async (instance: typeof a) => (await instance.services.reads.get(project.key, project.environments[2]!.key))!.version;
    const toggle = (enabled: boolean) =>
      admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[2]!.key}/flags/checkout`, { enabled });

    before(async () => {
      database = await createTestDatabase(dialect);
      a = await startInstance(database, env);
      const port = freePort();
      await a.app.listen({ port, host: '127.0.0.1' });
      baseA = `http://127.0.0.1:${port}`;
      if (dialect === 'postgres') {
        b = await startInstance(database, env);
        const portB = freePort();
        await b.app.listen({ port: portB, host: '127.0.0.1' });
        baseB = `http://127.0.0.1:${portB}`;
      }
      project = (await admin('POST', '/admin/v1/projects', { name: 'Shop' })).json();
      await admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'checkout' });
    });
    after(async () => {
      for (const instance of [a, b]) {
        await instance?.app.close();
        await instance?.services.stop();
        await instance?.handle.close();
      }
      await database.drop();
    });

    it('tells every stream of the environment that a flag changed, with the new version', async () => {
      const { uri, etag } = await bulk(baseA);
      const version = await versionOn(a);
      const stream = await openStream(baseA + uri);
      assert.equal(stream.status, 200);
      assert.equal(stream.headers['content-type'], 'text/event-stream; charset=utf-8');
      assert.equal(stream.headers['x-accel-buffering'], 'no');
      assert.equal(stream.headers['cache-control'], 'no-store');
      assert.equal(stream.headers['access-control-allow-origin'], '*');
      await stream.next((block) => block.includes(': flagpost event stream'));
      await toggle(true);
      const block = await stream.next(isEvent);
      const data = dataOf(block);
      const after = await bulk(baseA);
      assert.notEqual(after.etag, etag);
      assert.notEqual(data.etag, version);
      assert.deepEqual(data, { type: 'refetchEvaluation', etag: await versionOn(a), lastModified: data.lastModified });
      assert.ok(data.lastModified! > 1_700_000_000);
      assert.match(block, new RegExp(`^id: ${data.etag}$`, 'm'));
      assert.equal(after.flags.find((f) => f.key === 'checkout')!.value, true);
      // A change of another environment is not told here.
      await admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/checkout`, { enabled: true });
      await toggle(false);
      assert.equal(dataOf(await stream.next(isEvent)).etag, await versionOn(a));
      stream.close();
    });

    it('sends heartbeats, and at once what was missed since Last-Event-ID', async () => {
      const { uri } = await bulk(baseA);
      const version = await versionOn(a);
      const current = await openStream(baseA + uri, { 'last-event-id': version });
      await current.next((block) => block === ': ping', 3000);
      const stale = await openStream(baseA + uri, { 'last-event-id': 'an-old-version' });
      assert.equal(dataOf(await stale.next(isEvent)).etag, version);
      // Up to date: the first event is the next change, not a repeat.
      await toggle(true);
      assert.equal(dataOf(await current.next(isEvent)).etag, await versionOn(a));
      current.close();
      stale.close();
      await toggle(false);
    });

    it('refuses bad tokens and more streams per client than allowed', async () => {
      const { uri } = await bulk(baseA);
      const forged = uri.replace(/\.[\w-]+$/, '.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
      for (const path of [forged, '/ofrep/v1/events', '/ofrep/v1/events?stream=abc']) {
        const res = await fetch(baseA + path);
        assert.equal(res.status, 401, path);
        assert.equal(((await res.json()) as { errorCode: string }).errorCode, 'GENERAL');
      }
      const open = [await openStream(baseA + uri), await openStream(baseA + uri), await openStream(baseA + uri)];
      const fourth = await fetch(baseA + uri);
      assert.equal(fourth.status, 429);
      assert.ok(Number(fourth.headers.get('retry-after')) > 0);
      open.pop()!.close();
      await new Promise((r) => setTimeout(r, 100));
      const again = await openStream(baseA + uri);
      assert.equal(again.status, 200);
      again.close();
      for (const s of open) s.close();
    });

    it('reaches the streams of another instance (PostgreSQL)', { skip: dialect !== 'postgres' }, async () => {
      const { uri } = await bulk(baseB!);
      const stream = await openStream(baseB! + uri);
      await stream.next((block) => block.includes(': flagpost event stream'));
      await toggle(true);
      const data = dataOf(await stream.next(isEvent, 5000));
      const onB = await bulk(baseB!);
      assert.equal(data.etag, await versionOn(b!), 'both instances name the same configuration alike');
      assert.equal(data.etag, await versionOn(a));
      assert.equal(onB.flags.find((f) => f.key === 'checkout')!.value, true);
      stream.close();
      await toggle(false);
    });

    it('ends the streams when the server closes', async () => {
      const { uri } = await bulk(baseA);
      const stream = await openStream(baseA + uri);
      await stream.next((block) => block.includes(': flagpost event stream'));
      const closing = a.app.close();
      await stream.ended;
      await closing;
    });
  });
}
