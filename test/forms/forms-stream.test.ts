import assert from 'node:assert/strict';
import net from 'node:net';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createForm, listSubmissions } from '../support/forms.ts';

const MiB = 1024 * 1024;

interface UploadOutcome {
  response: string;
  /** Whether the server closed the connection (it keeps an accepted one open: keep-alive). */
  closed: boolean;
  clientBytesWritten: number;
  serverBytesRead: number;
  millis: number;
}

/**
 * Streams a multipart upload of `fileBytes` over a real socket, 64 KiB at a time, honouring back-pressure,
 * as a browser does: it goes on sending after an early answer, until the body is sent or the server closes.
 * Returns once the answer is complete or the connection closed, with how much the server actually read.
 */
async function streamUpload(port: number, path: string, fileBytes: number, serverSockets: net.Socket[], declareLength = false): Promise<UploadOutcome> {
  const boundary = 'flagpostboundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="upload"; filename="huge.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const started = Date.now();
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  // The server's end of this very connection: its remote port is our local port. The 'connection'
  // event may come a little after 'connect'; a closed socket of an earlier test never counts.
  const clientPort = socket.localPort;
  let serverSide: net.Socket | undefined;
  for (let i = 0; i < 100 && !serverSide; i++) {
    serverSide = serverSockets.filter((s) => !s.destroyed && s.remotePort === clientPort).at(-1);
    if (!serverSide) await new Promise((r) => setTimeout(r, 10));
  }
  if (!serverSide) {
    socket.destroy();
    throw new Error(`no server socket for the client port ${clientPort} among ${serverSockets.length} accepted connections`);
  }
  let response = '';
  let closed = false;
  let answered: () => void;
  const complete = new Promise<void>((resolve) => (answered = resolve));
  socket.on('data', (chunk: Buffer) => {
    response += chunk.toString('latin1');
    // The whole answer is in: its head and as many body bytes as its Content-Length says.
    const end = response.indexOf('\r\n\r\n');
    const length = /\r\ncontent-length: *(\d+)/i.exec(response.slice(0, end));
    if (end >= 0 && length && response.length - end - 4 >= Number(length[1])) answered();
  });
  // The server cutting a body it refused resets the connection: the answer was read before.
  socket.on('error', () => {});
  const done = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closed = true;
      resolve();
    }),
  );
  const framing = declareLength ? `Content-Length: ${head.length + fileBytes + tail.length}` : 'Transfer-Encoding: chunked';
  socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n${framing}\r\n\r\n`);
  const send = (data: Buffer) =>
    declareLength ? socket.write(data) : socket.write(Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]));
  let written = 0;
  const block = Buffer.alloc(64 * 1024, 0x61);
  send(head);
  while (written < fileBytes && !closed) {
    const ok = send(block);
    written += block.length;
    if (!ok) await Promise.race([new Promise((r) => socket.once('drain', r)), done]);
  }
  if (!closed) {
    send(tail);
    if (!declareLength) socket.write('0\r\n\r\n');
  }
  // A refused upload ends with the server closing the connection; an accepted one stays open (keep-alive).
  await Promise.race([done, complete.then(() => (response.includes('\r\nconnection: close') ? done : undefined))]);
  const outcome = { response, closed, clientBytesWritten: written, serverBytesRead: serverSide.bytesRead, millis: Date.now() - started };
  socket.destroy();
  return outcome;
}

forEachDialect('form uploads are refused while they stream (contract D16)', (ctx) => {
  let port = 0;
  let form: { key: string };
  const serverSockets: net.Socket[] = [];
  before(async () => {
    form = await createForm(ctx(), { uploadsEnabled: true });
    ctx().app.server.on('connection', (s: net.Socket) => serverSockets.push(s));
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx().app.server.address() as net.AddressInfo).port;
  });

  it('refuses a 50 MB chunked upload at about 1 MiB, reads at most the lingering bound and closes the connection', async (t) => {
    const outcome = await streamUpload(port, `/v1/s/${form.key}?mode=rest`, 50 * MiB, serverSockets);
    t.diagnostic(
      `50 MB chunked upload: server read ${outcome.serverBytesRead} bytes, client wrote ${outcome.clientBytesWritten} bytes, answered in ${outcome.millis} ms`,
    );
    assert.match(outcome.response, /^HTTP\/1\.1 413 /);
    assert.ok(outcome.response.includes('"message":"Error: File \\"huge.bin\\" exceeds the 1.00MB upload limit"'), outcome.response);
    // The answer comes at about 1 MiB; after it the rest is read and dropped up to LINGER_MAX_BYTES (10 MiB).
    assert.ok(outcome.serverBytesRead < 12 * MiB, `server read ${outcome.serverBytesRead} bytes`);
    assert.ok(outcome.clientBytesWritten < 20 * MiB, `client wrote ${outcome.clientBytesWritten} bytes`);
    assert.ok(outcome.closed, 'the server closed the connection past the lingering bound');
    assert.equal((await listSubmissions(ctx(), form.key)).submissions.length, 0);
  });

  it('refuses a declared 50 MB Content-Length at once, before the body is read', async (t) => {
    const outcome = await streamUpload(port, `/v1/s/${form.key}?mode=rest`, 50 * MiB, serverSockets, true);
    t.diagnostic(
      `declared 50 MB upload: server read ${outcome.serverBytesRead} bytes, client wrote ${outcome.clientBytesWritten} bytes, answered in ${outcome.millis} ms`,
    );
    assert.match(outcome.response, /^HTTP\/1\.1 413 /);
    assert.match(outcome.response, /The submission exceeds the \d+\.\d\dMB size limit/);
    assert.ok(outcome.serverBytesRead < 3 * MiB, `server read ${outcome.serverBytesRead} bytes`);
    assert.ok(outcome.closed, 'the server closed the connection after its answer');
  });

  it('still accepts an upload of exactly 1 MiB over a real socket', async () => {
    const outcome = await streamUpload(port, `/v1/s/${form.key}?mode=rest`, MiB, serverSockets);
    assert.match(outcome.response, /^HTTP\/1\.1 200 /, outcome.response.slice(0, 300));
    const { submissions } = await listSubmissions(ctx(), form.key);
    assert.equal(submissions[0]!.files[0].size, MiB);
  });
});
