import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, dialects, type TestDatabase } from '../support/context.ts';
import { startWebhookReceiver, waitFor } from '../support/forms.ts';
import { freePort, type ServerProcess, startServerProcess, waitForHealth } from '../support/process.ts';

// Issue 19 section 2: FLAGPOST_WORKERS=2 runs two worker processes behind one port (docs/adr/0029-workers.md).
// Every request here opens a connection of its own, so that both workers answer; which one did is told
// by the random per-process prefix of the x-request-id every answer carries.

const TOKEN = 'workers-admin-token-0123456789';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The process that answered: the per-process prefix of its generated request ids. */
  worker: string;
}

let addressCounter = 0;
/** A client address of its own (through FLAGPOST_TRUST_PROXY=loopback), so that tests do not share rate limit budgets. */
const freshClient = () => `198.18.${Math.floor(++addressCounter / 250)}.${(addressCounter % 250) + 1}`;

function send(
  port: number,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown; client?: string } = {},
): Promise<Answer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: {
          connection: 'close',
          'x-forwarded-for': options.client ?? freshClient(),
          ...(payload === undefined ? {} : { 'content-type': 'application/json', accept: 'application/json' }),
          ...options.headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, worker: workerOf(res.headers) }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const workerOf = (headers: http.IncomingHttpHeaders) => String(headers['x-request-id']).slice(0, 13);
const admin = (port: number, method: string, path: string, body?: unknown) => send(port, method, path, { headers: { authorization: `Bearer ${TOKEN}` }, body });

interface Stream {
  worker: string;
  next(match: (block: string) => boolean, timeoutMs?: number): Promise<string>;
  close(): void;
}

function openStream(port: number, path: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, headers: { 'x-forwarded-for': freshClient() } }, (res) => {
      const blocks: string[] = [];
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          blocks.push(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      });
      resolve({
        worker: workerOf(res.headers),
        close: () => req.destroy(),
        async next(match, timeoutMs = 5000) {
          for (const deadline = Date.now() + timeoutMs; ;) {
            const i = blocks.findIndex(match);
            if (i !== -1) return blocks.splice(0, i + 1).pop()!;
            if (Date.now() > deadline) throw new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(blocks)}`);
            await new Promise((r) => setTimeout(r, 20));
          }
        },
      });
    });
    req.on('error', reject);
  });
}

/** The pid of the worker in `slot`, from the primary's log (a later line wins: a replacement). */
function workerPids(output: string): Map<number, number> {
  const pids = new Map<number, number>();
  for (const match of output.matchAll(/"slot":(\d+),"workerPid":(\d+),"msg":"worker listening"/g)) pids.set(Number(match[1]), Number(match[2]));
  return pids;
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('FLAGPOST_WORKERS=2 when a worker cannot start', () => {
  it('stops the primary with exit code 1 instead of replacing it forever (the port is taken)', async (t) => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.after(() => taken.close());
    const database = await createTestDatabase('sqlite');
    t.after(() => database.drop());
    const port = (taken.address() as AddressInfo).port;
    const server = startServerProcess(t, { ...database.env, PORT: String(port), FLAGPOST_WORKERS: '2', FLAGPOST_ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'info' });
    assert.equal(await server.exited, 1, server.output());
    assert.match(server.output(), /a worker exited while starting; stopping/);
  });
});

for (const dialect of dialects()) {
  describe(`FLAGPOST_WORKERS=2 [${dialect}]`, () => {
    let database: TestDatabase;
    let server: ServerProcess;
    let port: number;
    let project: { key: string; environments: Array<{ key: string }> };
    const receivers: Array<{ close(): Promise<void> }> = [];
    const cleanups: Array<() => unknown> = [];

    before(async () => {
      database = await createTestDatabase(dialect);
      port = freePort();
      server = startServerProcess(
        { after: (fn) => cleanups.push(fn) },
        {
          ...database.env,
          PORT: String(port),
          FLAGPOST_WORKERS: '2',
          FLAGPOST_ADMIN_TOKEN: TOKEN,
          LOG_LEVEL: 'info',
          FLAGPOST_TRUST_PROXY: 'loopback',
          FLAGPOST_RATE_LIMIT_MAX: '20',
          FLAGPOST_ADMIN_MAX_FAILURES: '4',
          FLAGPOST_WEBHOOK_TARGETS: 'any',
          FLAGPOST_OUTBOX_POLL_MS: '200',
        },
      );
      await waitForHealth(port);
      await waitFor(() => server.output().includes('"msg":"Flagpost is ready"'), 15_000, 'both workers listening');
      const created = await admin(port, 'POST', '/admin/v1/projects', { name: 'Shop' });
      assert.equal(created.status, 201, created.body);
      project = JSON.parse(created.body);
      assert.equal((await admin(port, 'POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'checkout' })).status, 201);
    });
    after(async () => {
      for (const cleanup of cleanups) await cleanup();
      for (const receiver of receivers) await receiver.close();
      await database?.drop();
    });

    const environment = () => project.environments[0]!.key;
    const evaluate = (client?: string) =>
      send(port, 'POST', '/ofrep/v1/evaluate/flags', { headers: { 'x-project-key': project.key, 'x-environment-key': environment() }, body: {}, client });
    const checkoutOf = (answer: Answer) =>
      (JSON.parse(answer.body) as { flags: Array<{ key: string; value: unknown }> }).flags.find((f) => f.key === 'checkout')?.value;
    const toggle = (enabled: boolean) => admin(port, 'PATCH', `/admin/v1/projects/${project.key}/environments/${environment()}/flags/checkout`, { enabled });

    it('starts two workers after the primary, runs the periodic jobs in slot 1 only, and warns about an old Node once', () => {
      const output = server.output();
      assert.equal(workerPids(output).size, 2, output);
      // The outbox poll, the retention job and any other periodic work start in slot 1 only.
      assert.equal([...output.matchAll(/"slot":1,"periodicJobs":true,"msg":"worker ready"/g)].length, 1, output);
      assert.equal([...output.matchAll(/"slot":2,"periodicJobs":false,"msg":"worker ready"/g)].length, 1, output);
      assert.ok(output.split('\n').filter((line) => line.includes('is end of life')).length <= 1);
    });

    it('answers every read on every worker with a write as soon as the write was answered', async () => {
      const workers = new Set<string>();
      for (const enabled of [true, false, true, false, true]) {
        const written = await toggle(enabled);
        assert.equal(written.status, 200, written.body);
        // The bound: zero once the write is answered (the writer waits until every worker applied it).
        const reads = await Promise.all(Array.from({ length: 8 }, () => evaluate()));
        for (const read of reads) {
          assert.equal(read.status, 200, read.body);
          assert.equal(checkoutOf(read), enabled, `worker ${read.worker} answered a stale value`);
          workers.add(read.worker);
        }
      }
      assert.equal(workers.size, 2, 'both workers answered');
    });

    it('tells the event streams of every worker about every change', async () => {
      const first = await evaluate();
      const uri = (JSON.parse(first.body) as { eventStreams: Array<{ endpoint: { requestUri: string } }> }).eventStreams[0]!.endpoint.requestUri;
      const streams: Stream[] = [];
      try {
        for (let i = 0; i < 12 && new Set(streams.map((s) => s.worker)).size < 2; i++) streams.push(await openStream(port, uri));
        assert.equal(new Set(streams.map((s) => s.worker)).size, 2, 'streams on both workers');
        for (const stream of streams) await stream.next((block) => block.includes(': flagpost event stream'));
        for (const enabled of [false, true]) {
          assert.equal((await toggle(enabled)).status, 200);
          for (const stream of streams) await stream.next((block) => /^data: .*refetchEvaluation/m.test(block));
        }
      } finally {
        for (const stream of streams) stream.close();
      }
    });

    it('counts one rate limit budget per client over both workers, not one per worker', async () => {
      const client = freshClient();
      const answers: Answer[] = [];
      for (let i = 0; i < 30; i++) answers.push(await evaluate(client));
      assert.equal(new Set(answers.map((a) => a.worker)).size, 2, 'both workers answered');
      assert.deepEqual(
        answers.map((a) => a.status),
        [...Array<number>(20).fill(200), ...Array<number>(10).fill(429)],
      );
    });

    it('locks an address out after FLAGPOST_ADMIN_MAX_FAILURES wrong tokens over both workers', async () => {
      const client = freshClient();
      const answers: Answer[] = [];
      // With reusePort the kernel picks the worker by a hash of the connection: enough requests that both answer.
      for (let i = 0; i < 12; i++)
        answers.push(await send(port, 'GET', '/admin/v1/projects', { headers: { authorization: 'Bearer wrong-token-0123456789' }, client }));
      assert.equal(new Set(answers.map((a) => a.worker)).size, 2, 'both workers answered');
      assert.deepEqual(
        answers.map((a) => a.status),
        [...Array<number>(4).fill(401), ...Array<number>(8).fill(429)],
      );
    });

    it('refuses password sign-ins of one e-mail address after five failures over both workers', async () => {
      // Every attempt from another client address: only the per-account throttle can refuse.
      const answers: Answer[] = [];
      for (let i = 0; i < 10; i++)
        answers.push(await send(port, 'POST', '/admin/v1/sessions', { body: { email: 'nobody@example.com', password: 'wrong password' } }));
      assert.equal(new Set(answers.map((a) => a.worker)).size, 2, 'both workers answered');
      assert.deepEqual(
        answers.map((a) => a.status),
        [...Array<number>(5).fill(401), ...Array<number>(5).fill(429)],
      );
    });

    it('delivers the webhook of each submission once, whichever worker took it', async () => {
      const receiver = await startWebhookReceiver();
      receivers.push(receiver);
      const form = await admin(port, 'POST', '/admin/v1/forms', { name: 'Contact', webhookUrl: receiver.url });
      assert.equal(form.status, 201, form.body);
      const { key } = JSON.parse(form.body) as { key: string };
      const submitted: Answer[] = [];
      for (let i = 0; i < 12; i++) submitted.push(await send(port, 'POST', `/v1/s/${key}?mode=rest`, { body: { email: `p${i}@example.com` } }));
      for (const answer of submitted) assert.equal(answer.status, 200, answer.body);
      assert.equal(new Set(submitted.map((a) => a.worker)).size, 2, 'both workers took submissions');
      await waitFor(() => receiver.received.length >= 12, 10_000, 'twelve webhooks');
      // Several polls of the jobs worker later, still one delivery per submission.
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(receiver.received.length, 12);
      assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 12);
    });

    it('takes concurrent writes through both workers without refusing any (SQLite: one writer at a time)', async () => {
      const form = await admin(port, 'POST', '/admin/v1/forms', { name: 'Busy' });
      const { key } = JSON.parse(form.body) as { key: string };
      const writes = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          i % 2 === 0 ? toggle(i % 4 === 0) : send(port, 'POST', `/v1/s/${key}?mode=rest`, { body: { email: `busy${i}@example.com` } }),
        ),
      );
      assert.deepEqual(
        writes.map((w) => w.status),
        Array<number>(24).fill(200),
        writes.map((w) => w.body).join('\n'),
      );
      assert.equal(new Set(writes.map((w) => w.worker)).size, 2, 'both workers wrote');
    });

    it('replaces a worker that was killed and keeps answering', async () => {
      const before = workerPids(server.output());
      const victim = before.get(2)!;
      process.kill(victim, 'SIGKILL');
      const replacement = await waitFor(
        () => {
          const pid = workerPids(server.output()).get(2);
          return pid !== undefined && pid !== victim && pid;
        },
        15_000,
        'a replacement of the worker of slot 2',
      );
      assert.match(server.output(), /"msg":"worker exited; replacing it"/);
      assert.ok(isAlive(replacement));
      const workers = new Set<string>();
      for (let i = 0; i < 16; i++) {
        const read = await evaluate();
        assert.equal(read.status, 200);
        workers.add(read.worker);
      }
      assert.equal(workers.size, 2, 'the replacement answers too');
      // The replacement hears changes like the others.
      assert.equal((await toggle(false)).status, 200);
      for (let i = 0; i < 6; i++) assert.equal(checkoutOf(await evaluate()), false);
    });

    it('drains every worker on SIGTERM and exits 0', async () => {
      const pids = [...workerPids(server.output()).values()];
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0, server.output());
      for (const pid of pids) assert.equal(isAlive(pid), false, `worker ${pid} still runs`);
    });
  });
}
