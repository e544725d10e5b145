import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { before, it } from 'node:test';
import { promisify } from 'node:util';
import { forEachDialect } from '../test/support/context.ts';
import { createForm, multipart } from '../test/support/forms.ts';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const TRIES = Number(process.env.RESET_TRIES ?? 200);

/**
 * Issue 8: a submission refused before its body is read (too many files, a file too large) must reach
 * the client as its 413, not as a connection reset. Bodies up to 8 MiB, 200 tries each, with Node's
 * fetch and with curl.
 */
forEachDialect('early refusals arrive as answers, not resets', (ctx) => {
  let url = '';
  const bodies: Array<[string, ReturnType<typeof multipart>]> = [];
  before(async () => {
    const form = await createForm(ctx(), { uploadsEnabled: true });
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}/v1/s/${form.key}?mode=rest`;
    const files = (n: number, size: number) => Array.from({ length: n }, (_, i) => ({ name: `f${i}`, filename: `f${i}.bin`, content: Buffer.alloc(size, 97) }));
    bodies.push(['six files of 10 KB', multipart(files(6, 10 * 1024))]);
    bodies.push(['a file of 1 MiB + 1 byte', multipart(files(1, MiB + 1))]);
    bodies.push(['eight files of 1 MiB (8 MiB)', multipart(files(8, MiB - 200))]);
  });

  it(`answers ${TRIES} refused uploads of each kind to Node's fetch with 413, never a reset`, { timeout: 300_000 }, async (t) => {
    for (const [label, { payload, contentType }] of bodies) {
      const outcomes = new Map<string, number>();
      for (let i = 0; i < TRIES; i++) {
        let outcome: string;
        try {
          const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body: payload });
          await res.arrayBuffer();
          outcome = String(res.status);
        } catch (error) {
          outcome = (error as { cause?: { code?: string } }).cause?.code ?? 'error';
        }
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
      t.diagnostic(`${label}: ${[...outcomes].map(([o, n]) => `${o} x${n}`).join(', ')}`);
      assert.deepEqual([...outcomes], [['413', TRIES]], label);
    }
  });

  it(`answers ${Math.min(TRIES, 50)} refused uploads of each kind to curl with 413`, { timeout: 300_000 }, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-resets-'));
    try {
      for (const [label, { payload, contentType }] of bodies) {
        const file = path.join(dir, 'body');
        fs.writeFileSync(file, payload);
        const outcomes = new Map<string, number>();
        for (let i = 0; i < Math.min(TRIES, 50); i++) {
          const { stdout } = await run('curl', [
            '-s',
            '-o',
            '/dev/null',
            '-w',
            '%{http_code}',
            '-H',
            `Content-Type: ${contentType}`,
            '--data-binary',
            `@${file}`,
            url,
          ]).catch((error: { stdout?: string; code?: number }) => ({ stdout: `curl exit ${error.code}` }));
          outcomes.set(stdout, (outcomes.get(stdout) ?? 0) + 1);
        }
        t.diagnostic(`curl, ${label}: ${[...outcomes].map(([o, n]) => `${o} x${n}`).join(', ')}`);
        assert.deepEqual([...outcomes], [['413', Math.min(TRIES, 50)]], label);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
