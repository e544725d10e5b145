import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { chooseEncoding, representationOf } from '../../src/evaluation/compression.ts';
import { answer } from '../../src/evaluation/flag.read-model.ts';
import { createTestContext, type TestContext } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';
import { freePort } from '../support/process.ts';

// Issue 10: pre-compressed flag answers. Answers over 1 KB go out as brotli or gzip when the client
// accepts it, each encoding with its own ETag, Vary naming Accept-Encoding; compressed once per
// snapshot, never per request; the fast path and the routes answer byte for byte alike.

describe('choosing an encoding', () => {
  it('prefers brotli, honours q-values and refusals', () => {
    const cases: Array<[string | undefined, string | undefined]> = [
      [undefined, undefined],
      ['', undefined],
      ['identity', undefined],
      ['gzip', 'gzip'],
      ['gzip, deflate, br', 'br'],
      ['br;q=0, gzip', 'gzip'],
      ['br;q=0.5, gzip;q=0.8', 'gzip'],
      ['*', 'br'],
      ['*;q=0', undefined],
      ['gzip;q=0, br;q=0', undefined],
      ['GZIP', 'gzip'],
      ['x-gzip', 'gzip'],
    ];
    for (const [header, expected] of cases) assert.equal(chooseEncoding(header), expected, String(header));
  });

  it('compresses an answer once per encoding and leaves small ones alone', () => {
    const big = answer(200, { flags: Array.from({ length: 50 }, (_, i) => ({ slug: `flag-${i}`, enabled: true })) });
    const first = representationOf(big, 'br');
    assert.equal(representationOf(big, 'br'), first, 'the same bytes, not compressed again');
    assert.ok(first.bytes.length < big.bytes.length / 4);
    assert.equal(first.etag, `${big.etag.slice(0, -1)}.br"`);
    const small = answer(200, { slug: 'x', enabled: true });
    assert.equal(representationOf(small, 'br').encoding, undefined);
    assert.equal(representationOf(small, 'br').bytes, small.bytes);
  });
});

function get(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

for (const fastPath of ['true', 'false']) {
  describe(`compressed flag reads (fast path ${fastPath})`, () => {
    let ctx: TestContext;
    let port: number;
    let project: ProjectFixture;
    before(async () => {
      ctx = await createTestContext('sqlite', { FLAGPOST_FLAG_FAST_PATH: fastPath });
      port = freePort();
      await ctx.app.listen({ port, host: '127.0.0.1' });
      project = await createProject(ctx);
      for (let i = 0; i < 40; i++) await createFlag(ctx, project.key, { slug: `flag-${i}`, description: `The flag number ${i}`, payload: { i } });
      await get(port, '/v1/flags', keys(project)); // warm: the fast path answers warm snapshots only
    });
    after(async () => {
      await ctx.close();
    });

    it('sends brotli, gzip or identity as asked, each with its own ETag', async () => {
      const plain = await get(port, '/v1/flags', keys(project));
      assert.equal(plain.status, 200);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.headers.vary, 'x-project-key, x-environment-key, accept-encoding');
      assert.ok(plain.body.length > 1024);
      const br = await get(port, '/v1/flags', { ...keys(project), 'accept-encoding': 'gzip, deflate, br' });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(br.headers.vary, 'x-project-key, x-environment-key, accept-encoding');
      assert.equal(br.headers.etag, `${String(plain.headers.etag).slice(0, -1)}.br"`);
      assert.equal(Number(br.headers['content-length']), br.body.length);
      assert.deepEqual(brotliDecompressSync(br.body), plain.body);
      const gz = await get(port, '/v1/flags', { ...keys(project), 'accept-encoding': 'gzip' });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.deepEqual(gunzipSync(gz.body), plain.body);
      assert.ok(br.body.length < gz.body.length && gz.body.length < plain.body.length / 3, `${br.body.length} < ${gz.body.length} < ${plain.body.length}`);
      // Any representation's ETag revalidates: the content is the same.
      for (const tag of [plain.headers.etag, br.headers.etag, gz.headers.etag]) {
        const again = await get(port, '/v1/flags', { ...keys(project), 'accept-encoding': 'br', 'if-none-match': String(tag) });
        assert.equal(again.status, 304, String(tag));
        assert.equal(again.headers.etag, br.headers.etag);
      }
    });

    it('leaves small answers uncompressed and without Vary on the encoding', async () => {
      const one = await get(port, '/v1/flags/flag-1', { ...keys(project), 'accept-encoding': 'br' });
      assert.equal(one.status, 200);
      assert.equal(one.headers['content-encoding'], undefined);
      assert.equal(one.headers.vary, 'x-project-key, x-environment-key');
    });

    it('compresses the OFREP bulk answer too', async () => {
      const res = await fetch(`http://127.0.0.1:${port}/ofrep/v1/evaluate/flags`, {
        method: 'POST',
        headers: { ...keys(project), 'content-type': 'application/json', 'accept-encoding': 'br' },
        body: '{}',
      });
      assert.equal(res.headers.get('content-encoding'), 'br');
      assert.match(res.headers.get('etag')!, /\.br"$/);
      assert.equal(((await res.json()) as { flags: unknown[] }).flags.length, 80);
    });
  });
}
