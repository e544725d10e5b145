import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createApiKey, createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';
import { createForm, submitJson, submitMultipart, submitUrlencoded } from '../support/forms.ts';

const GENERIC = 'Something went wrong, please try again later.';

/** Sends raw bytes to the server and returns what it answers before closing. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // write, not end: a half-closed client may lose an answer that needs a database round trip first.
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));

forEachDialect('hostile input', (ctx) => {
  let project: ProjectFixture;
  let form: { key: string };
  let port: number;

  before(async () => {
    project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'checkout', enabled: true });
    await createFlag(ctx(), project.key, { slug: 'beta', isPreview: true });
    form = await createForm(ctx(), { uploadsEnabled: true });
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx().app.server.address() as AddressInfo).port;
  });

  it('answers a slug that does not decode with the flag 404, and other bad paths with the generic 400', async () => {
    const k = keys(project);
    const flag = await ctx().app.inject({ method: 'GET', url: '/v1/flags/a%C0b', headers: k });
    assert.equal(flag.statusCode, 404);
    assert.deepEqual(flag.json(), { enabled: false, error: true, message: 'Flag with slug a%C0b does not exist' });
    const long = await ctx().app.inject({ method: 'GET', url: `/v1/flags/${'a'.repeat(2100)}`, headers: k });
    assert.equal(long.statusCode, 404);
    assert.equal(long.json().enabled, false);
    assert.ok(long.body.length < 400, 'the slug is not echoed whole');
    for (const url of ['/v1/s/a%C0b', '/admin/v1/projects/a%C0b']) {
      const res = await ctx().app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '{}' });
      assert.equal(res.statusCode, 400, url);
      assert.deepEqual(res.json(), { error: true, message: GENERIC });
      assert.equal(res.headers['cache-control'], 'no-store');
    }
  });

  it('answers malformed HTTP and oversized headers with the error object', async () => {
    const bad = await raw(port, 'GET /v1/flags HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n');
    assert.match(bad, /^HTTP\/1.1 400/);
    assert.deepEqual(bodyOf(bad), { error: true, message: GENERIC });
    const huge = await raw(port, `GET /v1/flags HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.match(huge, /^HTTP\/1.1 431/);
    assert.deepEqual(bodyOf(huge), { error: true, message: 'Request headers are too large' });
  });

  it('treats a repeated key header as Node joins it, not as its first value', async () => {
    const k = keys(project);
    await fetch(`http://127.0.0.1:${port}/v1/flags/checkout`, { headers: k }).then((r) => r.arrayBuffer()); // warm
    const twice = await raw(
      port,
      `GET /v1/flags/checkout HTTP/1.1\r\nHost: x\r\nConnection: close\r\nx-project-key: ${k['x-project-key']}\r\nx-project-key: ${k['x-project-key']}\r\nx-environment-key: ${k['x-environment-key']}\r\n\r\n`,
    );
    assert.match(twice, /^HTTP\/1.1 404/);
    assert.equal(bodyOf(twice).enabled, false);
  });

  it('answers a trailing slash after a slug with 404 whether or not the read model is warm', async () => {
    const url = `http://127.0.0.1:${port}/v1/flags/checkout/`;
    for (let i = 0; i < 3; i++) {
      const res = await fetch(url, { headers: keys(project) });
      assert.equal(res.status, 404);
      await res.arrayBuffer();
    }
    const list = await fetch(`http://127.0.0.1:${port}/v1/flags/`, { headers: keys(project) });
    assert.equal(list.status, 200);
  });

  it('refuses NUL characters and deep nesting with a 400 on every engine, storing nothing', async () => {
    const nul = await ctx().app.inject({
      method: 'POST',
      url: '/v1/flags/preview/feedback',
      headers: { ...keys(project), 'content-type': 'application/json' },
      payload: JSON.stringify({ flagKey: 'beta', mood: 'SAD', rating: 1, description: 'a\u0000b' }),
    });
    assert.equal(nul.statusCode, 400);
    assert.equal(nul.json().message, GENERIC);
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = { a: deep };
    const nested = await ctx().app.inject({
      method: 'POST',
      url: '/v1/flags/preview/feedback',
      headers: { ...keys(project), 'content-type': 'application/json' },
      payload: `{"flagKey":"beta","mood":"SAD","rating":1,"metadata":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`,
    });
    assert.equal(nested.statusCode, 400);
    const token = await createApiKey(ctx(), project.key);
    const refs = await ctx().app.inject({
      method: 'POST',
      url: '/v1/flags/code-refs',
      headers: { ...keys(project), 'x-api-key': token, 'content-type': 'application/json' },
      payload: JSON.stringify({ branch: 'm\u0000', projectName: 'p', references: { a: [{ filePath: 'f', lineNumber: 1, lineContent: 'c' }] } }),
    });
    assert.equal(refs.statusCode, 400);
    const admin = await ctx().admin('GET', '/admin/v1/projects/a%00b');
    assert.equal(admin.statusCode, 400);

    const formCases = [
      await submitJson(ctx(), form.key, { message: 'a\u0000b' }),
      await submitJson(ctx(), form.key, `{"x":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`),
      await submitUrlencoded(ctx(), form.key, 'a=b%00c', { rest: true }),
      await submitMultipart(ctx(), form.key, [{ name: 'x', value: 'a\u0000b' }]),
      await submitMultipart(ctx(), form.key, [{ name: 'f', filename: 'a\u0000b.txt', content: 'hi' }]),
    ];
    for (const res of formCases) {
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().error, true);
    }
    const unknown = await submitJson(ctx(), 'a%00b', { a: 1 });
    assert.equal(unknown.statusCode, 404);
    const stored = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions`);
    assert.deepEqual(stored.json().submissions, []);
  });

  it('refuses a line number beyond the range both engines store', async () => {
    const token = await createApiKey(ctx(), project.key);
    for (const [lineNumber, status] of [
      [2147483647, 201],
      [2147483648, 400],
      [1e300, 400],
    ] as const) {
      const res = await ctx().app.inject({
        method: 'POST',
        url: '/v1/flags/code-refs',
        headers: { ...keys(project), 'x-api-key': token, 'content-type': 'application/json' },
        payload: JSON.stringify({ branch: 'b', projectName: 'p', references: { a: [{ filePath: 'f', lineNumber, lineContent: 'c' }] } }),
      });
      assert.equal(res.statusCode, status, String(lineNumber));
    }
  });

  it('exports CSV whatever the field names, even ones named like Object.prototype members', async () => {
    const csvForm = await createForm(ctx());
    assert.equal((await submitUrlencoded(ctx(), csvForm.key, 'a=1', { rest: true })).statusCode, 200);
    // `constructor` itself is refused as a field name (test/forms/forms-submit.test.ts); other members are plain names.
    assert.equal((await submitUrlencoded(ctx(), csvForm.key, 'hasOwnProperty=y&toString=z', { rest: true })).statusCode, 200);
    const res = await ctx().admin('GET', `/admin/v1/forms/${csvForm.key}/submissions.csv`);
    assert.equal(res.statusCode, 200);
    const lines = res.body.trim().split('\r\n');
    assert.equal(lines.length, 3);
    assert.match(lines[0]!, /"hasOwnProperty","toString","a"/);
    assert.match(lines[1]!, /"y","z",""/);
    assert.match(lines[2]!, /"","","1"/, 'the older row has empty cells for the newer fields');
  });
});

forEachDialect(
  'hostile input under a rate limit',
  (ctx) => {
    it('lets a cross-origin client read the 429 of the form endpoint', async () => {
      const form = await createForm(ctx());
      let last: Awaited<ReturnType<typeof submitJson>> | undefined;
      for (let i = 0; i < 3; i++) last = await submitJson(ctx(), form.key, { a: i }, { headers: { origin: 'https://site.example' } });
      assert.equal(last!.statusCode, 429);
      assert.equal(last!.headers['access-control-allow-origin'], '*');
    });
  },
  { FLAGPOST_RATE_LIMIT_MAX: '2' },
);
