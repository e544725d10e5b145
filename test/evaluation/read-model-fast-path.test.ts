import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture, sampleDoc } from '../support/fixtures.ts';

/** A request id Flagpost made itself (the client's was missing or unusable). */
const GENERATED_ID = /^[0-9a-f-]{13}-[0-9a-z]+$/;

// The fast path (src/http/fast-path.ts) must answer exactly as the Fastify routes do. Two servers on the
// same services: one with the fast path, one with FLAGPOST_FLAG_FAST_PATH=false (the reference). Every
// request goes to both, in step, so that their rate limit counters agree too.

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

async function call(base: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(base + path, init);
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { status: res.status, headers, body: await res.text() };
}

/** Header values that legitimately differ between two answers given one after the other. */
function comparable(answer: Answer): Answer {
  const headers = { ...answer.headers };
  assert.ok(headers.date);
  delete headers.date;
  // Seconds left in the window: one second apart when a second boundary falls between the two requests.
  if (headers['ratelimit-reset'] !== undefined) headers['ratelimit-reset'] = 'present';
  if (headers['retry-after'] !== undefined) headers['retry-after'] = 'present';
  // Generated ids differ per request: a per-process prefix and a counter (src/http/fast-path.ts).
  if (headers['x-request-id'] && GENERATED_ID.test(headers['x-request-id'])) headers['x-request-id'] = '<generated>';
  return { ...answer, headers };
}

const limits = { FLAGPOST_RATE_LIMIT_MAX: '300', FLAGPOST_RATE_LIMIT_WINDOW_MS: '60000' };

forEachDialect(
  'flag read fast path answers exactly as the routes',
  (ctx) => {
    let project: ProjectFixture;
    let fast: FastifyInstance;
    let reference: FastifyInstance;
    let fastBase: string;
    let referenceBase: string;
    const logged: string[] = [];

    before(async () => {
      project = await createProject(ctx());
      await createFlag(ctx(), project.key, { slug: 'checkout', enabled: true, payload: { v: 'ü€' }, description: 'Ünïcode' });
      await createFlag(ctx(), project.key, { slug: 'beta', isPreview: true, previewName: 'Beta', previewContent: sampleDoc });
      const stream = new Writable({
        write(chunk, _encoding, done) {
          logged.push(String(chunk));
          done();
        },
      });
      const { services } = ctx();
      assert.equal(services.config.flagFastPath, true, 'on by default');
      fast = await buildApp(services, { logger: { level: 'info', stream } });
      reference = await buildApp({ ...services, config: { ...services.config, flagFastPath: false } }, { logger: false });
      fastBase = await fast.listen({ port: 0, host: '127.0.0.1' });
      referenceBase = await reference.listen({ port: 0, host: '127.0.0.1' });
    });
    after(async () => {
      await fast?.close();
      await reference?.close();
    });

    async function same(path: string, init: RequestInit = {}): Promise<Answer> {
      const a = await call(fastBase, path, init);
      const b = await call(referenceBase, path, init);
      assert.deepEqual(comparable(a), comparable(b), `${init.method ?? 'GET'} ${path}`);
      return a;
    }

    /** True when Fastify saw the request (it logs every request it routes; the fast path does not). */
    const routedByFastify = (requestId: string) => logged.some((line) => line.includes(`"reqId":"${requestId}"`));

    it('answers warm reads itself, with the same bytes and headers as the routes', async () => {
      await same('/v1/flags/checkout', { headers: keys(project) }); // loads the snapshot
      await same('/v1/flags/preview', { headers: keys(project) }); // renders its preview answer
      const cases = ['/v1/flags/checkout', '/v1/flags', '/v1/flags/', '/v1/flags?x=1', '/v1/flags/preview', '/v1/flags/beta?y'];
      for (const [i, path] of cases.entries()) {
        const id = `fast-${i}`;
        const answer = await same(path, { headers: { ...keys(project), 'x-request-id': id, origin: 'https://app.example' } });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers['x-request-id'], id);
        assert.equal(answer.headers['access-control-allow-origin'], '*');
        assert.equal(answer.headers['access-control-expose-headers'], 'ETag');
        assert.ok(answer.headers['ratelimit-remaining']);
        assert.equal(routedByFastify(id), false, `${path} answered by the fast path`);
      }
    });

    it('answers 304 for a matching If-None-Match, strong or weak, and 200 otherwise', async () => {
      const { headers } = await same('/v1/flags', { headers: keys(project) });
      for (const tag of [headers.etag!, `W/${headers.etag}`, `"other", ${headers.etag}`, '*']) {
        const answer = await same('/v1/flags', { headers: { ...keys(project), 'if-none-match': tag, 'x-request-id': 'inm' } });
        assert.equal(answer.status, 304);
        assert.equal(answer.body, '');
      }
      assert.equal((await same('/v1/flags', { headers: { ...keys(project), 'if-none-match': '"nope"' } })).status, 200);
      assert.equal(routedByFastify('inm'), false);
    });

    it('leaves everything else to Fastify, with the same answers', async () => {
      const unknown = { 'x-project-key': 'nope', 'x-environment-key': 'nope' };
      const cases: Array<[string, RequestInit, number]> = [
        ['/v1/flags/missing', { headers: keys(project) }, 404],
        ['/v1/flags/checkout', { headers: { 'x-project-key': project.key } }, 400],
        ['/v1/flags/checkout', { headers: unknown }, 404],
        ['/v1/flags', { headers: unknown }, 404],
        ['/v1/flags/%63heckout', { headers: keys(project) }, 200],
        ['/v1/flags/checkout', { method: 'HEAD', headers: keys(project) }, 200],
        ['/v1/flags/checkout', { method: 'OPTIONS', headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } }, 204],
        ['/v1/flags/a/b', { headers: keys(project) }, 404],
        ['/v1/flagsx', { headers: keys(project) }, 404],
      ];
      for (const [i, [path, init, status]] of cases.entries()) {
        const id = `slow-${i}`;
        const answer = await same(path, { ...init, headers: { ...(init.headers as Record<string, string>), 'x-request-id': id } });
        assert.equal(answer.status, status, `${path}: ${answer.body}`);
        assert.equal(routedByFastify(id), true, `${path} went to Fastify`);
      }
    });

    it('makes a new id for an unusable x-request-id, as Fastify does', async () => {
      const answer = await same('/v1/flags/checkout', { headers: { ...keys(project), 'x-request-id': 'no spaces allowed' } });
      assert.match(answer.headers['x-request-id']!, GENERATED_ID);
    });

    it('sees a write at once: the fast path serves the new snapshot right after the admin answer', async () => {
      const env = project.environments[0]!.key;
      const res = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env}/flags/checkout`, { enabled: false });
      assert.equal(res.statusCode, 200);
      const first = await same('/v1/flags/checkout', { headers: { ...keys(project), 'x-request-id': 'after-write' } });
      assert.equal(JSON.parse(first.body).enabled, false);
    });

    it('answers OFREP evaluations of warm snapshots itself, as the routes do (issue 10)', async () => {
      const post = (path: string, body: string | undefined, extra: Record<string, string>) =>
        same(path, { method: 'POST', headers: { ...keys(project), 'content-type': 'application/json', ...extra }, body });
      const warm = await post('/ofrep/v1/evaluate/flags', '{}', {});
      const cases: Array<[string, string | undefined, Record<string, string>, number]> = [
        ['/ofrep/v1/evaluate/flags', '{"context":{"targetingKey":"u-1"}}', {}, 200],
        ['/ofrep/v1/evaluate/flags', undefined, {}, 200],
        ['/ofrep/v1/evaluate/flags?x=1', '{}', { 'accept-encoding': 'br' }, 200],
        ['/ofrep/v1/evaluate/flags', '{}', { 'if-none-match': warm.headers.etag! }, 304],
        ['/ofrep/v1/evaluate/flags/checkout', '{"context":{}}', {}, 200],
        ['/ofrep/v1/evaluate/flags/checkout:payload', '{}', {}, 200],
        ['/ofrep/v1/evaluate/flags/checkout', '{"context":', {}, 400],
        ['/ofrep/v1/evaluate/flags', '{"context":[1]}', {}, 400],
      ];
      for (const [i, [path, body, extra, status]] of cases.entries()) {
        const id = `ofrep-${i}`;
        const answer = await post(path, body, { ...extra, 'x-request-id': id });
        assert.equal(answer.status, status, `${path}: ${answer.body}`);
        assert.equal(routedByFastify(id), false, `${path} answered by the fast path`);
      }
      const slow: Array<[string, string, Record<string, string>, number]> = [
        ['/ofrep/v1/evaluate/flags/nope', '{}', {}, 404],
        ['/ofrep/v1/evaluate/flags', '{}', { 'x-environment-key': 'nope' }, 403],
        ['/ofrep/v1/evaluate/flags', JSON.stringify({ context: { big: 'x'.repeat(20_000) } }), {}, 200],
        ['/ofrep/v1/evaluate/flags?flagConfigEtag=abc', '{}', {}, 200],
      ];
      for (const [i, [path, body, extra, status]] of slow.entries()) {
        const id = `ofrep-slow-${i}`;
        const answer = await post(path, body, { ...extra, 'x-request-id': id });
        assert.equal(answer.status, status, `${path}: ${answer.body}`);
        assert.equal(routedByFastify(id), true, `${path} went to Fastify`);
      }
    });

    it('answers targeted OFREP evaluations itself, as the routes do, for every context (issue 18)', async () => {
      const other = await createProject(ctx(), 'Targeted');
      const env = other.environments[0]!.key;
      await createFlag(ctx(), other.key, { slug: 'plain', enabled: true });
      await createFlag(ctx(), other.key, { slug: 'rollout', enabled: false, payload: { a: 1 } });
      await createFlag(ctx(), other.key, { slug: 'color', type: 'string', variants: { red: 'red', blue: 'blue' }, defaultVariant: 'red' });
      const rules = (serve: unknown) => [
        { id: 'de', name: 'Germany', conditions: [{ attribute: 'country', operator: 'equals', values: ['DE'] }], serve: { variant: serve } },
        {
          id: 'half',
          conditions: [],
          serve: {
            split: {
              weights: [
                { variant: serve === 'on' ? 'off' : 'red', weight: 1 },
                { variant: serve, weight: 1 },
              ],
            },
          },
        },
      ];
      for (const [slug, serve] of [
        ['rollout', 'on'],
        ['color', 'blue'],
      ] as const) {
        const res = await ctx().admin('PATCH', `/admin/v1/projects/${other.key}/environments/${env}/flags/${slug}`, { state: 'ENABLED', rules: rules(serve) });
        assert.equal(res.statusCode, 200, res.body);
      }
      const post = (path: string, body: string, extra: Record<string, string> = {}) =>
        same(path, { method: 'POST', headers: { ...keys(other), 'content-type': 'application/json', ...extra }, body });
      await post('/ofrep/v1/evaluate/flags', '{}'); // loads the snapshot
      const contexts = [
        '{}',
        '{"context":{"targetingKey":"u-1"}}',
        '{"context":{"targetingKey":"u-2","country":"DE"}}',
        '{"context":{"targetingKey":"u-3","country":"FR","plan":"pro"}}',
        '{"context":{"targetingKey":7}}',
        '{"context":{"country":{"nested":[1,2,3]}}}',
      ];
      let n = 0;
      for (const body of contexts) {
        for (const path of [
          '/ofrep/v1/evaluate/flags',
          '/ofrep/v1/evaluate/flags/rollout',
          '/ofrep/v1/evaluate/flags/rollout:payload',
          '/ofrep/v1/evaluate/flags/color',
          '/ofrep/v1/evaluate/flags/plain',
        ]) {
          const id = `targeted-${n++}`;
          const answer = await post(path, body, { 'x-request-id': id, 'accept-encoding': 'gzip, br' });
          assert.ok(answer.status === 200 || answer.status === 400, `${path} ${body}: ${answer.status}`);
          assert.equal(routedByFastify(id), false, `${path} ${body} answered by the fast path`);
          if (path === '/ofrep/v1/evaluate/flags' && answer.status === 200) {
            const id304 = `targeted-${n++}`;
            const again = await post(path, body, { 'x-request-id': id304, 'if-none-match': answer.headers.etag! });
            assert.equal(again.status, 304);
            assert.equal(routedByFastify(id304), false);
          }
        }
      }
      const de = JSON.parse((await post('/ofrep/v1/evaluate/flags/rollout', contexts[2]!)).body);
      assert.deepEqual([de.value, de.reason, de.metadata.ruleId], [true, 'TARGETING_MATCH', 'de']);
    });

    it('counts its answers against the rate limit and lets Fastify answer the 429', async () => {
      let answer: Answer;
      let guard = 0;
      do {
        answer = await same('/v1/flags/checkout', { headers: { ...keys(project), 'x-request-id': `rl-${guard}` } });
        guard++;
      } while (answer.status === 200 && guard < 400);
      assert.equal(answer.status, 429);
      assert.deepEqual(JSON.parse(answer.body), { error: true, message: 'Too many requests, please try again later.' });
      assert.ok(answer.headers['retry-after']);
      assert.equal(routedByFastify(`rl-${guard - 2}`), false, 'the last allowed read came from the fast path');
    });
  },
  limits,
);

forEachDialect('flag read fast path opens OFREP event streams as the route does', (ctx) => {
  let project: ProjectFixture;
  let fast: FastifyInstance;
  let reference: FastifyInstance;
  let fastBase: string;
  let referenceBase: string;
  const logged: string[] = [];
  const open: AbortController[] = [];
  /** Reads each open stream to its end. */
  const ends: Array<() => Promise<void>> = [];

  before(async () => {
    project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'checkout', enabled: true });
    const stream = new Writable({
      write(chunk, _encoding, done) {
        logged.push(String(chunk));
        done();
      },
    });
    const { services } = ctx();
    fast = await buildApp(services, { logger: { level: 'info', stream } });
    reference = await buildApp({ ...services, config: { ...services.config, flagFastPath: false } }, { logger: false });
    fastBase = await fast.listen({ port: 0, host: '127.0.0.1' });
    referenceBase = await reference.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    for (const controller of open) controller.abort();
    await fast?.close();
    await reference?.close();
  });

  const routedByFastify = (requestId: string) => logged.some((line) => line.includes(`"reqId":"${requestId}"`));

  /** Opens a stream and reads it until `until` is in its text; the connection stays open (closed in after()). */
  async function openStream(base: string, path: string, headers: Record<string, string>, until: string): Promise<Answer> {
    const controller = new AbortController();
    open.push(controller);
    const res = await fetch(base + path, { headers, signal: controller.signal });
    const answer: Answer = { status: res.status, headers: {}, body: '' };
    res.headers.forEach((value, name) => {
      answer.headers[name] = value;
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    while (!answer.body.includes(until)) {
      const { value, done } = await reader.read();
      if (done) break;
      answer.body += decoder.decode(value, { stream: true });
    }
    ends.push(async () => {
      while (!(await reader.read()).done);
    });
    return answer;
  }

  it('answers a stream of a warm snapshot itself, with the same status, headers and first events', async () => {
    // Every request goes to both servers, so that their rate limit counters agree.
    const bulk = { method: 'POST', headers: { ...keys(project), 'content-type': 'application/json' }, body: '{}' };
    await call(referenceBase, '/ofrep/v1/evaluate/flags', bulk);
    const uri = (JSON.parse((await call(fastBase, '/ofrep/v1/evaluate/flags', bulk)).body) as { eventStreams: Array<{ endpoint: { requestUri: string } }> })
      .eventStreams[0]!.endpoint.requestUri;
    const cases: Array<[string, Record<string, string>, string]> = [
      ['sse-fast-1', {}, ': flagpost event stream\n\n'],
      ['sse-fast-2', { 'last-event-id': 'an-older-version' }, 'refetchEvaluation'],
    ];
    for (const [id, extra, until] of cases) {
      const headers = { 'x-request-id': id, ...extra };
      const a = await openStream(fastBase, uri, headers, until);
      const b = await openStream(referenceBase, uri, headers, until);
      assert.deepEqual(comparable(a), comparable(b), id);
      assert.equal(a.status, 200);
      assert.equal(a.headers['content-type'], 'text/event-stream; charset=utf-8');
      assert.equal(a.headers['x-request-id'], id);
    }
    // Left to Fastify: a query the router would decode, a wrong token, no token.
    for (const base of [fastBase, referenceBase]) await openStream(base, `${uri}&x=1`, { 'x-request-id': 'sse-slow-1' }, ': flagpost event stream\n\n');
    for (const [i, path] of [`${uri.slice(0, -2)}xx`, '/ofrep/v1/events'].entries()) {
      const id = `sse-slow-${i + 2}`;
      const answer = await same(path, id);
      assert.equal(answer.status, 401);
      assert.equal(routedByFastify(id), true, `${path} went to Fastify`);
    }
    // Fastify logs a stream's line when the server ends it (as on shutdown).
    ctx().services.streams.closeAll();
    for (const end of ends) await end();
    assert.equal(routedByFastify('sse-slow-1'), true, 'the stream with another query went to Fastify');
    assert.equal(routedByFastify('sse-fast-1'), false, 'answered by the fast path');
    assert.equal(routedByFastify('sse-fast-2'), false, 'answered by the fast path');
  });

  async function same(path: string, id: string): Promise<Answer> {
    const a = await call(fastBase, path, { headers: { 'x-request-id': id } });
    const b = await call(referenceBase, path, { headers: { 'x-request-id': id } });
    assert.deepEqual(comparable(a), comparable(b), path);
    return a;
  }
});
