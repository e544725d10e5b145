import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/db/codec.ts';
import { createTestContext, dialects, type TestContext } from '../support/context.ts';
import { createForm, submitMultipart } from '../support/forms.ts';
import { startS3, type TestS3 } from '../support/s3.ts';

// Issue 19, section 3: uploaded files in an object store (docs/adr/0030-file-storage.md), against a
// real S3-compatible server (s3rver) on loopback and the data folder. No acknowledged submission
// points at a missing object, and no object outlives its submission, through deletes, erasure,
// retention, a store outage and abandoned uploads; migrate-files moves files both ways.

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, '../..');
const MiB = 1024 * 1024;

interface Stored {
  id: string;
  files: Array<{ id: string; name: string; size: number }>;
}

async function submitted(ctx: TestContext, formKey: string, id: string): Promise<Stored> {
  const res = await ctx.admin('GET', `/admin/v1/forms/${formKey}/submissions/${id}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as Stored;
}

async function download(ctx: TestContext, formKey: string, id: string, fileId: string) {
  return ctx.admin('GET', `/admin/v1/forms/${formKey}/submissions/${id}/files/${fileId}`);
}

async function fileRows(ctx: TestContext) {
  return ctx.handle.db.selectFrom('submission_files').select(['id', 'storage', 'object_key', 'content']).orderBy('id').execute();
}

for (const dialect of dialects()) {
  describe(`files in S3 [${dialect}]`, () => {
    let s3: TestS3;
    let ctx: TestContext;
    let offset = 0;
    const clock = () => new Date(Date.now() + offset);
    before(async () => {
      s3 = await startS3();
      ctx = await createTestContext(
        dialect,
        { ...s3.env, FLAGPOST_FILE_STORAGE: 's3', FLAGPOST_MAX_FILE_BYTES: String(8 * MiB), FLAGPOST_RETENTION_INTERVAL_MS: '0', FLAGPOST_RATE_LIMIT_MAX: '0' },
        { clock },
      );
    });
    after(async () => {
      await ctx?.close();
      await s3?.close();
    });

    it('streams files into the bucket while the body is read and serves them back through the admin API', async () => {
      const form = await createForm(ctx, { uploadsEnabled: true });
      // 6 MiB is more than one part: the upload goes as a multipart upload.
      const big = randomBytes(6 * MiB);
      const res = await submitMultipart(ctx, form.key, [
        { name: 'email', value: 'ada@example.com' },
        { name: 'cv', filename: 'cv.txt', content: 'hello', contentType: 'text/plain' },
        { name: 'scan', filename: 'scan.bin', content: big },
      ]);
      assert.equal(res.statusCode, 200, res.body);
      const s = await submitted(ctx, form.key, res.json().id);
      assert.deepEqual(
        s.files.map((f) => [f.name, f.size]),
        [
          ['cv.txt', 5],
          ['scan.bin', big.length],
        ],
      );
      const keys = await s3.keys();
      for (const f of s.files) assert.ok(keys.includes(`files/${f.id}`), `object of ${f.name} in the bucket`);
      for (const row of (await fileRows(ctx)).filter((r) => s.files.some((f) => f.id === r.id))) {
        assert.equal(row.storage, 's3');
        assert.equal(Buffer.from(row.content).length, 0, 'no bytes in the database');
      }
      const small = await download(ctx, form.key, s.id, s.files[0]!.id);
      assert.equal(small.statusCode, 200);
      assert.equal(small.body, 'hello');
      assert.match(small.headers['content-disposition'] as string, /attachment/);
      const large = await download(ctx, form.key, s.id, s.files[1]!.id);
      assert.equal(large.statusCode, 200);
      assert.ok(large.rawPayload.equals(big), 'the 6 MiB file comes back byte for byte');
      assert.deepEqual(await ctx.services.files.ledger(), { uploading: 0, deleting: 0 });
    });

    it('refuses a file over the limit and leaves nothing in the bucket', async () => {
      const form = await createForm(ctx, { uploadsEnabled: true });
      const before = await s3.keys();
      const res = await submitMultipart(ctx, form.key, [
        { name: 'small', filename: 'a.txt', content: 'first file, stored before the second fails' },
        { name: 'huge', filename: 'huge.bin', content: randomBytes(8 * MiB + 1) },
      ]);
      assert.equal(res.statusCode, 413, res.body);
      assert.deepEqual(await s3.keys(), before);
      assert.deepEqual(await ctx.services.files.ledger(), { uploading: 0, deleting: 0 });
    });

    it('deletes the objects of a deleted submission, an erased person, a deleted form and expired submissions', async () => {
      const form = await createForm(ctx, { uploadsEnabled: true });
      const submit = async (email: string) => {
        const res = await submitMultipart(ctx, form.key, [
          { name: 'email', value: email },
          { name: 'f', filename: 'f.txt', content: `file of ${email}` },
        ]);
        assert.equal(res.statusCode, 200, res.body);
        return submitted(ctx, form.key, res.json().id);
      };
      const objectOf = (s: Stored) => `files/${s.files[0]!.id}`;

      const deleted = await submit('grace@example.com');
      assert.ok((await s3.keys()).includes(objectOf(deleted)));
      assert.equal((await ctx.admin('DELETE', `/admin/v1/forms/${form.key}/submissions/${deleted.id}`)).statusCode, 204);
      assert.ok(!(await s3.keys()).includes(objectOf(deleted)), 'delete removes the object');

      const erased = await submit('erase-me@example.com');
      const erase = await ctx.admin('POST', '/admin/v1/personal-data/erase', { email: 'erase-me@example.com' });
      assert.equal(erase.statusCode, 200, erase.body);
      assert.ok(!(await s3.keys()).includes(objectOf(erased)), 'erasure removes the object');

      const expiring = await submit('old@example.com');
      assert.equal((await ctx.admin('PATCH', `/admin/v1/forms/${form.key}`, { retentionDays: 1 })).statusCode, 200);
      offset = 2 * 86_400_000;
      try {
        const round = await ctx.services.retention.runOnce();
        assert.ok(round.deleted >= 1);
      } finally {
        offset = 0;
      }
      assert.ok(!(await s3.keys()).includes(objectOf(expiring)), 'retention removes the object');

      const other = await createForm(ctx, { uploadsEnabled: true });
      const res = await submitMultipart(ctx, other.key, [{ name: 'f', filename: 'f.txt', content: 'kept until the form goes' }]);
      const kept = await submitted(ctx, other.key, res.json().id);
      assert.ok((await s3.keys()).includes(objectOf(kept)));
      assert.equal((await ctx.admin('DELETE', `/admin/v1/forms/${other.key}`)).statusCode, 204);
      assert.ok(!(await s3.keys()).includes(objectOf(kept)), 'deleting the form removes the objects of its submissions');
      assert.deepEqual(await ctx.services.files.ledger(), { uploading: 0, deleting: 0 });
    });

    it('answers 503 with Retry-After while the store is down, stores nothing, and the sweep cleans up afterwards', async () => {
      const form = await createForm(ctx, { uploadsEnabled: true });
      const ok = await submitMultipart(ctx, form.key, [{ name: 'f', filename: 'before.txt', content: 'stored before the outage' }]);
      const stored = await submitted(ctx, form.key, ok.json().id);
      const keysBefore = await s3.keys();
      const countBefore = (await fileRows(ctx)).length;
      await s3.stop();
      try {
        const res = await submitMultipart(ctx, form.key, [
          { name: 'email', value: 'outage@example.com' },
          { name: 'f', filename: 'during.txt', content: randomBytes(64 * 1024) },
        ]);
        assert.equal(res.statusCode, 503, res.body);
        assert.equal(res.headers['retry-after'], '30');
        assert.equal(res.json().message, 'Error: Files cannot be stored right now, please try again in a moment');
        const dl = await download(ctx, form.key, stored.id, stored.files[0]!.id);
        assert.equal(dl.statusCode, 503);
        assert.equal(dl.headers['retry-after'], '30');
        assert.equal(dl.json().message, 'The file store cannot be reached right now; try again in a moment');
      } finally {
        await s3.start();
      }
      const list = await ctx.admin('GET', `/admin/v1/forms/${form.key}/submissions`);
      assert.equal(list.json().submissions.length, 1, 'the refused submission is not stored');
      assert.equal((await fileRows(ctx)).length, countBefore);
      await ctx.services.retention.runOnce();
      assert.deepEqual(await s3.keys(), keysBefore, 'nothing half-stored is left in the bucket');
      assert.deepEqual(await ctx.services.files.ledger(), { uploading: 0, deleting: 0 });
      assert.equal((await download(ctx, form.key, stored.id, stored.files[0]!.id)).body, 'stored before the outage');
    });

    it('sweeps abandoned uploads and unreferenced objects, and never an object a submission points at', async () => {
      const form = await createForm(ctx, { uploadsEnabled: true });
      const res = await submitMultipart(ctx, form.key, [{ name: 'f', filename: 'live.txt', content: 'live' }]);
      const live = await submitted(ctx, form.key, res.json().id);
      // An upload whose process was killed: its record and a part of its object.
      const abandoned = `files/${newId()}`;
      await ctx.handle.db
        .insertInto('file_objects')
        .values({ object_key: abandoned, storage: 's3', state: 'uploading', created_at: new Date().toISOString(), claimed_at: null })
        .execute();
      await s3.put(abandoned, Buffer.from('half'));
      // An object that nothing knows (a restored backup, a crash before 0014's ledger existed).
      const orphan = `files/${newId()}`;
      await s3.put(orphan, Buffer.from('orphan'));
      // Not someone else's object: keys Flagpost does not write are left alone.
      await s3.put('other/readme.txt', Buffer.from('not ours'));

      const early = await ctx.services.retention.runOnce();
      assert.equal(early.objectsDeleted + early.orphansDeleted, 0, 'young uploads may still be under way');
      offset = 2 * 3_600_000;
      try {
        const round = await ctx.services.retention.runOnce();
        assert.equal(round.objectsDeleted, 1);
        assert.equal(round.orphansDeleted, 1);
      } finally {
        offset = 0;
      }
      const keys = await s3.keys();
      assert.ok(!keys.includes(abandoned) && !keys.includes(orphan));
      assert.ok(keys.includes(`files/${live.files[0]!.id}`) && keys.includes('other/readme.txt'));
      assert.equal((await download(ctx, form.key, live.id, live.files[0]!.id)).body, 'live');
      await s3.delete('other/readme.txt');
    });
  });

  describe(`migrate-files between the database and S3 [${dialect}]`, () => {
    let s3: TestS3;
    let ctx: TestContext;
    before(async () => {
      s3 = await startS3();
      ctx = await createTestContext(dialect, { ...s3.env, FLAGPOST_FILE_STORAGE: 'db', FLAGPOST_RETENTION_INTERVAL_MS: '0' });
    });
    after(async () => {
      await ctx?.close();
      await s3?.close();
    });
    const migrate = (to: string) =>
      run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'migrate-files', '--to', to], {
        cwd: REPO,
        env: { PATH: process.env.PATH, ...ctx.database.env, ...s3.env, LOG_LEVEL: 'silent' },
      });

    it('moves every file to the bucket and back, readable all along, and a second run has nothing to do', async () => {
      const form = await createForm(ctx, { uploadsEnabled: true });
      const contents = Array.from({ length: 3 }, (_, i) => randomBytes(1000 + i));
      const stored: Stored[] = [];
      for (const [i, content] of contents.entries()) {
        const res = await submitMultipart(ctx, form.key, [{ name: 'f', filename: `f${i}.bin`, content }]);
        assert.equal(res.statusCode, 200, res.body);
        stored.push(await submitted(ctx, form.key, res.json().id));
      }
      const readAll = async () => {
        for (const [i, s] of stored.entries()) {
          const dl = await download(ctx, form.key, s.id, s.files[0]!.id);
          assert.equal(dl.statusCode, 200);
          assert.ok(dl.rawPayload.equals(contents[i]!), `file ${i} reads back`);
        }
      };
      assert.ok((await fileRows(ctx)).every((r) => r.storage === 'db'));

      const toS3 = await migrate('s3');
      assert.match(toS3.stdout, /Moved 3 files to s3/);
      const rows = await fileRows(ctx);
      assert.ok(rows.every((r) => r.storage === 's3' && Buffer.from(r.content).length === 0));
      assert.deepEqual(await s3.keys(), rows.map((r) => r.object_key!).sort());
      await readAll();
      assert.match((await migrate('s3')).stdout, /Moved 0 files to s3/);

      const toDb = await migrate('db');
      assert.match(toDb.stdout, /Moved 3 files to db/);
      assert.ok((await fileRows(ctx)).every((r) => r.storage === 'db' && r.object_key === null));
      assert.deepEqual(await s3.keys(), [], 'the objects go once their files are back in the database');
      await readAll();
      assert.deepEqual(await ctx.services.files.ledger(), { uploading: 0, deleting: 0 });
    });

    it('refuses --to s3 without a bucket and an unknown target', async () => {
      const env = { PATH: process.env.PATH, ...ctx.database.env, LOG_LEVEL: 'silent' };
      await assert.rejects(
        run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'migrate-files', '--to', 's3'], { cwd: REPO, env }),
        (e: { code: number; stderr: string }) => {
          assert.equal(e.code, 2);
          assert.match(e.stderr, /FLAGPOST_S3_BUCKET/);
          return true;
        },
      );
      await assert.rejects(run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'migrate-files', '--to', 'ftp'], { cwd: REPO, env }), { code: 2 });
    });
  });

  describe(`files in the data folder [${dialect}]`, () => {
    let ctx: TestContext;
    before(async () => {
      ctx = await createTestContext(dialect, { FLAGPOST_FILE_STORAGE: 'fs', FLAGPOST_RETENTION_INTERVAL_MS: '0' });
    });
    after(async () => {
      await ctx?.close();
    });

    it('writes each file under <dataDir>/files, serves it, and deletes it with its submission', async () => {
      const form = await createForm(ctx, { uploadsEnabled: true });
      const res = await submitMultipart(ctx, form.key, [{ name: 'f', filename: 'a.txt', content: 'on disk' }]);
      assert.equal(res.statusCode, 200, res.body);
      const s = await submitted(ctx, form.key, res.json().id);
      const file = path.join(ctx.config.dataDir, 'files', s.files[0]!.id);
      assert.equal(fs.readFileSync(file, 'utf8'), 'on disk');
      assert.equal((fs.statSync(file).mode & 0o777).toString(8), '600');
      assert.equal((await download(ctx, form.key, s.id, s.files[0]!.id)).body, 'on disk');
      assert.equal((await ctx.admin('DELETE', `/admin/v1/forms/${form.key}/submissions/${s.id}`)).statusCode, 204);
      assert.ok(!fs.existsSync(file));
      assert.deepEqual(fs.readdirSync(path.join(ctx.config.dataDir, 'files')), []);
    });
  });
}
