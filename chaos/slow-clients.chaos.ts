import assert from 'node:assert/strict';
import net from 'node:net';
import { before, it } from 'node:test';
import { forEachDialect } from '../test/support/context.ts';
import { createForm, multipart } from '../test/support/forms.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A multipart upload over a raw socket that sends its headers and the first half of its body, then waits. */
async function startUpload(port: number, path: string) {
  const { payload, contentType } = multipart([
    { name: 'email', value: 'ada@example.com' },
    { name: 'cv', filename: 'cv.txt', content: 'x'.repeat(2000), contentType: 'text/plain' },
  ]);
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => {});
  let response = '';
  socket.on('data', (chunk: Buffer) => {
    response += chunk.toString('latin1');
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const half = Math.floor(payload.length / 2);
  socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: ${contentType}\r\nContent-Length: ${payload.length}\r\n\r\n`);
  socket.write(payload.subarray(0, half));
  return {
    /** Sends the rest of the body and resolves with the status line of the answer. */
    async finish(): Promise<string> {
      socket.write(payload.subarray(half));
      await Promise.race([closed, sleep(5000)]);
      return response.split('\r\n')[0] ?? '';
    },
    vanish: () => socket.destroy(),
    statusLine: () => response.split('\r\n')[0] ?? '',
    closed,
  };
}

/** A whole multipart submission over a fresh connection; the status, or 0 when no answer came within `ms`. */
async function submitWithin(port: number, path: string, ms: number): Promise<number> {
  const { payload, contentType } = multipart([{ name: 'email', value: 'late@example.com' }]);
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: payload,
      signal: AbortSignal.timeout(ms),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

forEachDialect(
  'upload slots always come back (issue 8)',
  (ctx) => {
    let port = 0;
    let path = '';
    before(async () => {
      const form = await createForm(ctx(), { uploadsEnabled: true });
      path = `/v1/s/${form.key}?mode=rest`;
      await ctx().app.listen({ port: 0, host: '127.0.0.1' });
      port = (ctx().app.server.address() as net.AddressInfo).port;
    });

    it('frees the place of a queued upload whose client disconnects', async () => {
      const holding = [await startUpload(port, path), await startUpload(port, path)];
      await sleep(300); // both hold the two slots
      const queued = [await startUpload(port, path), await startUpload(port, path)];
      await sleep(300); // both wait for a slot
      for (const upload of queued) upload.vanish();
      await sleep(100);
      for (const upload of holding) assert.match(await upload.finish(), /^HTTP\/1\.1 200 /);
      assert.equal(await submitWithin(port, path, 2000), 200, 'multipart intake still answers within 2 s');
    });

    it('refuses an upload that drips past its deadline and frees its slot', async () => {
      const dripping = [await startUpload(port, path), await startUpload(port, path)];
      await sleep(300); // both hold the two slots
      const started = Date.now();
      assert.equal(await submitWithin(port, path, 4000), 200, 'the waiting upload gets a slot once the deadline ends the dripping ones');
      assert.ok(Date.now() - started >= 800, `not before the deadline (${Date.now() - started} ms)`);
      await Promise.all(dripping.map((d) => Promise.race([d.closed, sleep(2000)])));
      for (const d of dripping) assert.doesNotMatch(d.statusLine(), /^HTTP\/1\.1 200 /);
    });
  },
  { FLAGPOST_MAX_CONCURRENT_UPLOADS: '2', FLAGPOST_UPLOAD_TIMEOUT_MS: '1500', FLAGPOST_MAX_UPLOADS_PER_CLIENT: '10' },
);

forEachDialect(
  'slow and idle clients (issue 8)',
  (ctx) => {
    let port = 0;
    let path = '';
    before(async () => {
      const form = await createForm(ctx(), { uploadsEnabled: true });
      path = `/v1/s/${form.key}?mode=rest`;
      await ctx().app.listen({ port: 0, host: '127.0.0.1' });
      port = (ctx().app.server.address() as net.AddressInfo).port;
    });

    it('closes a connection that sends nothing', async () => {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => {});
      const started = Date.now();
      const closed = await Promise.race([new Promise<boolean>((resolve) => socket.once('close', () => resolve(true))), sleep(5000).then(() => false)]);
      socket.destroy();
      assert.ok(closed, 'the idle connection was closed');
      assert.ok(Date.now() - started < 4000);
    });

    it('answers 408 to a body that drips one byte at a time past the request timeout', async () => {
      const socket = net.connect(port, '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      socket.on('error', () => {});
      let response = '';
      socket.on('data', (chunk: Buffer) => {
        response += chunk.toString('latin1');
      });
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
      const drip = setInterval(() => socket.write(' '), 300);
      const started = Date.now();
      await Promise.race([closed, sleep(8000)]);
      clearInterval(drip);
      socket.destroy();
      assert.match(response, /^HTTP\/1\.1 408 /);
      assert.ok(response.includes('"message":"Request timed out"'), response);
      assert.ok(Date.now() - started < 6000, `closed after ${Date.now() - started} ms`);
    });

    it('refuses a third upload at once from a client that has two under way', async () => {
      const two = [await startUpload(port, path), await startUpload(port, path)];
      await sleep(200);
      const third = await startUpload(port, path);
      await Promise.race([third.closed, sleep(1500)]);
      assert.match(third.statusLine(), /^HTTP\/1\.1 429 /);
      for (const upload of [...two, third]) upload.vanish();
    });
  },
  { FLAGPOST_IDLE_TIMEOUT_MS: '1000', FLAGPOST_REQUEST_TIMEOUT_MS: '2000' },
);
