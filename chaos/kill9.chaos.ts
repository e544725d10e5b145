import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { createTestDatabase, dialects, type TestDatabase } from '../test/support/context.ts';
import { multipart } from '../test/support/forms.ts';
import { freePort, type ServerProcess, startServerProcess, waitForHealth } from '../test/support/process.ts';
import { startS3, type TestS3 } from '../test/support/s3.ts';

const TOKEN = 'chaos-admin-token-0123456789';
const admin = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * Issue 8: kill -9 while JSON and multipart submissions arrive concurrently. Every submission the
 * server acknowledged (200) must be stored after a restart, with its file's bytes intact. Issue 19: the
 * same with files in S3 (s3rver on loopback), where after the restart the sweep also leaves exactly the
 * objects of stored submissions in the bucket: none missing, none without its submission.
 */
for (const dialect of dialects()) {
  for (const storage of ['db', 's3'] as const) {
    describe(`kill -9 during concurrent submissions [${dialect}, files in ${storage}]`, () => {
      let database: TestDatabase;
      let server: ServerProcess;
      let s3: TestS3 | undefined;
      after(async () => {
        await database?.drop();
        await s3?.close();
      });

      it('loses no acknowledged submission and no file byte', { timeout: 120_000 }, async (t) => {
        database = await createTestDatabase(dialect);
        const port = freePort();
        const files: Record<string, string> = {};
        if (storage === 's3') {
          s3 = await startS3();
          // Sweep every second; an upload unfinished for 5 s is abandoned (the upload deadline is as long).
          Object.assign(files, s3.env, {
            FLAGPOST_FILE_STORAGE: 's3',
            FLAGPOST_UPLOAD_TIMEOUT_MS: '5000',
            FLAGPOST_FILE_SWEEP_AGE_MS: '5000',
            FLAGPOST_RETENTION_INTERVAL_MS: '1000',
          });
        }
        const env = {
          ...database.env,
          ...files,
          PORT: String(port),
          FLAGPOST_ADMIN_TOKEN: TOKEN,
          FLAGPOST_MAX_UPLOADS_PER_CLIENT: '100',
          FLAGPOST_RATE_LIMIT_MAX: '0',
        };
        server = startServerProcess(t, env);
        await waitForHealth(port, 30_000);
        const base = `http://127.0.0.1:${port}`;
        const form = await (
          await fetch(`${base}/admin/v1/forms`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Chaos', uploadsEnabled: true }) })
        ).json();

        const acknowledged = new Map<string, string | null>(); // id -> sha256 of its file, or null
        let stop = false;
        const worker = async (n: number) => {
          for (let i = 0; !stop; i++) {
            try {
              if (i % 2 === 0) {
                const res = await fetch(`${base}/v1/s/${form.key}?mode=rest`, {
                  method: 'POST',
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify({ n, i }),
                });
                if (res.status === 200) acknowledged.set((await res.json()).id, null);
              } else {
                const content = randomBytes(20_000 + ((n * 7919 + i) % 50_000));
                const { payload, contentType } = multipart([
                  { name: 'n', value: String(n) },
                  { name: 'file', filename: `f${n}-${i}.bin`, content },
                ]);
                const res = await fetch(`${base}/v1/s/${form.key}?mode=rest`, { method: 'POST', headers: { 'content-type': contentType }, body: payload });
                if (res.status === 200) acknowledged.set((await res.json()).id, sha(content));
              }
            } catch {
              // The connection died with the process: not acknowledged.
            }
          }
        };
        const workers = Array.from({ length: 12 }, (_, n) => worker(n));
        await new Promise((r) => setTimeout(r, 2500));
        server.child.kill('SIGKILL');
        await server.exited;
        stop = true;
        await Promise.all(workers);
        t.diagnostic(`${acknowledged.size} submissions acknowledged before kill -9`);
        assert.ok(acknowledged.size > 20, 'the run acknowledged submissions before the kill');

        server = startServerProcess(t, env);
        await waitForHealth(port, 30_000);
        const stored = new Map<string, { files: Array<{ id: string }> }>();
        let cursor: string | null = null;
        do {
          const page: { submissions: Array<{ id: string; files: Array<{ id: string }> }>; nextCursor: string | null } = await (
            await fetch(`${base}/admin/v1/forms/${form.key}/submissions?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { headers: admin })
          ).json();
          for (const s of page.submissions) stored.set(s.id, s);
          cursor = page.nextCursor;
        } while (cursor);
        let filesChecked = 0;
        for (const [id, hash] of acknowledged) {
          const submission = stored.get(id);
          assert.ok(submission, `acknowledged submission ${id} is stored`);
          if (hash) {
            const file = await fetch(`${base}/admin/v1/forms/${form.key}/submissions/${id}/files/${submission.files[0]!.id}`, { headers: admin });
            assert.equal(sha(Buffer.from(await file.arrayBuffer())), hash, `the file of ${id} is intact`);
            filesChecked++;
          }
        }
        t.diagnostic(`${stored.size} stored, ${filesChecked} files compared byte for byte`);
        if (s3) {
          const expected = [...stored.values()].flatMap((s) => s.files.map((f) => `files/${f.id}`)).sort();
          let keys = await s3.keys();
          t.diagnostic(`${keys.length} objects in the bucket right after the restart, ${expected.length} files stored`);
          const started = Date.now();
          // Objects of uploads the kill cut short are swept once they are older than the sweep age.
          while (JSON.stringify(keys) !== JSON.stringify(expected) && Date.now() - started < 60_000) {
            await new Promise((r) => setTimeout(r, 500));
            keys = await s3.keys();
          }
          t.diagnostic(`${expected.length} objects of stored submissions in the bucket after the sweep`);
          assert.deepEqual(keys, expected, 'the bucket holds the objects of stored submissions and nothing else');
        }
      });
    });
  }
}
