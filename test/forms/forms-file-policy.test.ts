import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createForm, listSubmissions, submitMultipart } from '../support/forms.ts';

/** The first bytes of real formats: a PNG, a PDF and a Windows executable (MZ header with a PE signature). */
const PNG = Buffer.concat([
  Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex'),
  Buffer.from('0000000d4944415478da63f8ffff3f0005fe02fea7d6a4f80000000049454e44ae426082', 'hex'),
]);
const PDF = Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n');
function exe(): Buffer {
  const bytes = Buffer.alloc(512);
  bytes.write('MZ', 0, 'latin1');
  bytes.writeUInt32LE(0x80, 0x3c);
  bytes.write('PE\0\0', 0x80, 'latin1');
  return bytes;
}

forEachDialect('form file policy (issue 34)', (ctx) => {
  let form: { key: string };
  let plain: { key: string };
  before(async () => {
    form = await createForm(ctx(), {
      uploadsEnabled: true,
      filePolicy: { allowedTypes: ['image/*', 'application/pdf'], maxFileBytes: 2048, maxFiles: 2, maxTotalBytes: 3000 },
    });
    plain = await createForm(ctx(), { uploadsEnabled: true });
  });

  it('takes files whose bytes are an allowed type, whatever their names and declared types', async () => {
    const res = await submitMultipart(ctx(), form.key, [
      { name: 'name', value: 'Ada' },
      { name: 'photo', filename: 'photo', content: PNG, contentType: 'application/octet-stream' },
      { name: 'cv', filename: 'cv.bin', content: PDF, contentType: 'text/plain' },
    ]);
    assert.equal(res.statusCode, 200, res.body);
  });

  it('refuses an .exe renamed .pdf with 415, naming the file, and keeps nothing of the submission', async () => {
    const before = (await listSubmissions(ctx(), form.key)).submissions.length;
    const objects = await ctx()
      .handle.db.selectFrom('submission_files')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    const res = await submitMultipart(ctx(), form.key, [
      { name: 'name', value: 'Ada' },
      { name: 'cv', filename: 'cv.pdf', content: exe(), contentType: 'application/pdf' },
    ]);
    assert.equal(res.statusCode, 415, res.body);
    assert.equal(res.json().message, 'Error: File "cv.pdf" is not an allowed type');
    assert.equal((await listSubmissions(ctx(), form.key)).submissions.length, before);
    const after = await ctx()
      .handle.db.selectFrom('submission_files')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(objects.n));
  });

  it('names the file exactly as sent: Error: File "cv.exe" is not an allowed type', async () => {
    const res = await submitMultipart(ctx(), form.key, [{ name: 'cv', filename: 'cv.exe', content: exe() }]);
    assert.equal(res.statusCode, 415);
    assert.equal(res.json().message, 'Error: File "cv.exe" is not an allowed type');
  });

  it('refuses text where only images and PDFs are allowed (text has no signature: it is detected as text/plain)', async () => {
    const res = await submitMultipart(ctx(), form.key, [{ name: 'note', filename: 'note.png', content: 'just text', contentType: 'image/png' }]);
    assert.equal(res.statusCode, 415);
  });

  it("answers 413 for the form's own size, count and total limits", async () => {
    const big = Buffer.concat([PDF, Buffer.alloc(3000, 0x20)]);
    const tooBig = await submitMultipart(ctx(), form.key, [{ name: 'cv', filename: 'big.pdf', content: big }]);
    assert.equal(tooBig.statusCode, 413);
    assert.equal(tooBig.json().message, 'Error: File "big.pdf" exceeds the 2.00KB upload limit');
    assert.equal(tooBig.json().code, 413);
    const three = await submitMultipart(ctx(), form.key, [
      { name: 'a', filename: 'a.png', content: PNG },
      { name: 'b', filename: 'b.png', content: PNG },
      { name: 'c', filename: 'c.png', content: PNG },
    ]);
    assert.equal(three.statusCode, 413);
    assert.equal(three.json().message, 'Error: Too many files, at most 2 files per submission');
    const half = Buffer.concat([PDF, Buffer.alloc(1800, 0x20)]);
    const total = await submitMultipart(ctx(), form.key, [
      { name: 'a', filename: 'a.pdf', content: half },
      { name: 'b', filename: 'b.pdf', content: half },
    ]);
    assert.equal(total.statusCode, 413);
    assert.equal(total.json().message, 'Error: The files of the submission exceed the 2.93KB total limit');
  });

  it('keeps the instance limits and their messages exactly for a form without a policy', async () => {
    const res = await submitMultipart(ctx(), plain.key, [{ name: 'f', filename: 'big.bin', content: Buffer.alloc(1048577) }]);
    assert.equal(res.statusCode, 413);
    const body = res.json();
    assert.equal(body.message, 'Error: File "big.bin" exceeds the 1.00MB upload limit');
    assert.equal(body.code, 413);
    assert.ok(body.url);
    const exeOk = await submitMultipart(ctx(), plain.key, [{ name: 'f', filename: 'tool.exe', content: exe() }]);
    assert.equal(exeOk.statusCode, 200, 'no policy: any type');
  });

  it('caps a policy at the instance limits', async () => {
    const wide = await createForm(ctx(), { uploadsEnabled: true, filePolicy: { allowedTypes: [], maxFileBytes: 50 * 1048576, maxFiles: 100 } });
    const res = await submitMultipart(ctx(), wide.key, [{ name: 'f', filename: 'big.bin', content: Buffer.alloc(1048577) }]);
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().message, 'Error: File "big.bin" exceeds the 1.00MB upload limit');
  });

  it('refuses a policy that is not one when it is saved', async () => {
    for (const filePolicy of [{ allowedTypes: ['png'] }, { allowedTypes: [], maxFiles: 0 }, {}, { allowedTypes: [], maxFileBytes: 10, maxTotalBytes: 5 }]) {
      const res = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { filePolicy });
      assert.equal(res.statusCode, 400, `${JSON.stringify(filePolicy)}: ${res.body}`);
    }
  });
});
