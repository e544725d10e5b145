import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { unsigned, unsignedUrl } from '../support/result-links.ts';
import { createForm, listSubmissions, type Part, submitJson, submitMultipart, submitUrlencoded } from '../support/forms.ts';

const MiB = 1024 * 1024;
const PUBLIC = 'http://forms.example.test';
const errorPage = (message: string) => `${PUBLIC}/v1/s/error?message=${encodeURIComponent(message)}`;
const file = (name: string, size: number, field = 'upload'): Part => ({
  name: field,
  filename: name,
  contentType: 'application/octet-stream',
  content: Buffer.alloc(size, 7),
});

forEachDialect(
  'form submission limits at and one past the boundary (contract D15, D16)',
  (ctx) => {
    let form: { key: string };
    const count = async () => (await listSubmissions(ctx(), form.key, '?limit=200')).submissions.length;
    before(async () => {
      form = await createForm(ctx(), { uploadsEnabled: true });
    });

    it('accepts a file of exactly 1,048,576 bytes', async () => {
      const res = await submitMultipart(ctx(), form.key, [file('exact.bin', MiB)]);
      assert.equal(res.statusCode, 200, res.body);
      const { submissions } = await listSubmissions(ctx(), form.key);
      assert.equal(submissions[0]!.files[0].size, MiB);
    });

    it('refuses a file of 1,048,577 bytes with the specification 413 body and stores nothing', async () => {
      const before = await count();
      const res = await submitMultipart(ctx(), form.key, [{ name: 'a', value: '1' }, file('big.bin', MiB + 1)]);
      assert.equal(res.statusCode, 413);
      const message = 'Error: File "big.bin" exceeds the 1.00MB upload limit';
      assert.deepEqual(unsigned(res.json()), { error: true, code: 413, message, url: errorPage(message) });
      // The rest of the body is read and thrown away on an open connection (lingering, issue 8).
      assert.notEqual(res.headers.connection, 'close');
      assert.equal(await count(), before);
    });

    it('redirects a too-large file to the error page without mode=rest', async () => {
      const res = await submitMultipart(ctx(), form.key, [file('big.bin', MiB + 1)], { rest: false });
      assert.equal(res.statusCode, 303);
      assert.equal(unsignedUrl(res.headers.location), errorPage('Error: File "big.bin" exceeds the 1.00MB upload limit'));
    });

    it('accepts 5 files and refuses 6 with 413', async () => {
      const five = [file('1.txt', 10, 'a'), file('2.txt', 10, 'a'), file('3.txt', 10, 'b'), file('4.txt', 10, 'c'), file('5.txt', 10, 'c')];
      assert.equal((await submitMultipart(ctx(), form.key, five)).statusCode, 200);
      const before = await count();
      const res = await submitMultipart(ctx(), form.key, [...five, file('6.txt', 10, 'd')]);
      assert.equal(res.statusCode, 413);
      const message = 'Error: Too many files, at most 5 files per submission';
      assert.deepEqual(unsigned(res.json()), { error: true, code: 413, message, url: errorPage(message) });
      assert.equal(await count(), before);
    });

    it('accepts 100 fields and refuses 101 with 413, in multipart, urlencoded and JSON', async () => {
      const names = (n: number) => Array.from({ length: n }, (_, i) => `f${i}`);
      const message = 'Error: Too many fields, at most 100 fields per submission';
      assert.equal(
        (
          await submitMultipart(
            ctx(),
            form.key,
            names(100).map((name) => ({ name, value: 'x' })),
          )
        ).statusCode,
        200,
      );
      assert.equal(
        (
          await submitUrlencoded(
            ctx(),
            form.key,
            names(100)
              .map((n) => `${n}=x`)
              .join('&'),
            { rest: true },
          )
        ).statusCode,
        200,
      );
      assert.equal((await submitJson(ctx(), form.key, Object.fromEntries(names(100).map((n) => [n, 'x'])))).statusCode, 200);
      const before = await count();
      const multi = await submitMultipart(
        ctx(),
        form.key,
        names(101).map((name) => ({ name, value: 'x' })),
      );
      assert.equal(multi.statusCode, 413);
      assert.equal(multi.json().message, message);
      const repeated = await submitUrlencoded(ctx(), form.key, Array.from({ length: 101 }, () => 'same=x').join('&'), { rest: true });
      assert.equal(repeated.statusCode, 413);
      assert.equal(repeated.json().message, message);
      const json = await submitJson(ctx(), form.key, Object.fromEntries(names(101).map((n) => [n, 'x'])));
      assert.equal(json.statusCode, 413);
      assert.equal(json.json().message, message);
      assert.equal(await count(), before);
    });

    it('accepts a field of exactly 65,536 bytes and refuses 65,537 with 413, in multipart, urlencoded and JSON', async () => {
      const at = 'é'.repeat(32 * 1024);
      const past = `${at}x`;
      assert.equal(Buffer.byteLength(at), 65536);
      const message = 'Error: Field "note" exceeds the 64.00KB field size limit';
      assert.equal((await submitMultipart(ctx(), form.key, [{ name: 'note', value: at }])).statusCode, 200);
      assert.equal((await submitUrlencoded(ctx(), form.key, `note=${encodeURIComponent(at)}`, { rest: true })).statusCode, 200);
      assert.equal((await submitJson(ctx(), form.key, { note: at })).statusCode, 200);
      const before = await count();
      for (const res of [
        await submitMultipart(ctx(), form.key, [{ name: 'note', value: past }]),
        await submitUrlencoded(ctx(), form.key, `note=${encodeURIComponent(past)}`, { rest: true }),
        await submitJson(ctx(), form.key, { note: past }),
      ]) {
        assert.equal(res.statusCode, 413);
        assert.deepEqual(unsigned(res.json()), { error: true, code: 413, message, url: errorPage(message) });
      }
      assert.equal(await count(), before);
    });

    it('refuses a JSON body over the body limit with 413', async () => {
      const res = await submitJson(ctx(), form.key, { a: 'x'.repeat(MiB) });
      assert.equal(res.statusCode, 413);
      assert.equal(res.json().message, 'Error: The submission exceeds the 1.00MB size limit');
    });

    it('refuses a multipart body whose declared Content-Length is far above the possible maximum, before reading it', async () => {
      const res = await ctx().app.inject({
        method: 'POST',
        url: `/v1/s/${form.key}?mode=rest`,
        headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(50 * MiB) },
        payload: '--x--\r\n',
      });
      assert.equal(res.statusCode, 413);
      assert.match(res.json().message, /^Error: The submission exceeds the \d+\.\d\dMB size limit$/);
    });
  },
  { FLAGPOST_PUBLIC_URL: PUBLIC },
);

forEachDialect(
  'form submission limits are configurable per deployment (contract D16)',
  (ctx) => {
    it('uses FLAGPOST_MAX_FILE_BYTES and FLAGPOST_MAX_FILES', async () => {
      const form = await createForm(ctx(), { uploadsEnabled: true });
      assert.equal((await submitMultipart(ctx(), form.key, [file('a', 2 * MiB), file('b', 10)])).statusCode, 200);
      const big = await submitMultipart(ctx(), form.key, [file('photo.jpg', 2 * MiB + 1)]);
      assert.equal(big.statusCode, 413);
      assert.equal(big.json().message, 'Error: File "photo.jpg" exceeds the 2.00MB upload limit');
      const many = await submitMultipart(ctx(), form.key, [file('a', 1), file('b', 1), file('c', 1)]);
      assert.equal(many.statusCode, 413);
      assert.equal(many.json().message, 'Error: Too many files, at most 2 files per submission');
    });
  },
  { FLAGPOST_MAX_FILE_BYTES: String(2 * MiB), FLAGPOST_MAX_FILES: '2' },
);

forEachDialect(
  'submission size bounds on every encoding (issue 8)',
  (ctx) => {
    let form: { key: string };
    before(async () => {
      form = await createForm(ctx());
    });
    const big = 'x'.repeat(3000);

    it('caps the text of a submission, names and values together, on JSON, urlencoded and multipart', async () => {
      const fields = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`f${i}`, big]));
      const answers = [
        await submitJson(ctx(), form.key, fields),
        await submitUrlencoded(ctx(), form.key, new URLSearchParams(fields).toString(), { rest: true }),
        await submitMultipart(
          ctx(),
          form.key,
          Object.entries(fields).map(([name, value]) => ({ name, value })),
        ),
      ];
      for (const res of answers) {
        assert.equal(res.statusCode, 413, res.body);
        assert.equal(res.json().message, 'Error: The text of the submission exceeds the 9.77KB limit');
      }
      const fits = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`f${i}`, big]));
      assert.equal((await submitJson(ctx(), form.key, fits)).statusCode, 200);
    });

    it('refuses a field name over 200 characters on every encoding', async () => {
      const name = 'n'.repeat(201);
      const answers = [
        await submitJson(ctx(), form.key, { [name]: 'v' }),
        await submitUrlencoded(ctx(), form.key, `${name}=v`, { rest: true }),
        await submitMultipart(ctx(), form.key, [{ name, value: 'v' }]),
      ];
      for (const res of answers) {
        assert.equal(res.statusCode, 413, res.body);
        assert.equal(res.json().message, 'Error: A field name is longer than 200 characters');
      }
      assert.equal((await submitJson(ctx(), form.key, { ['n'.repeat(200)]: 'v' })).statusCode, 200);
    });

    it('counts urlencoded fields while parsing and refuses the one past the limit', async () => {
      const res = await submitUrlencoded(ctx(), form.key, Array.from({ length: 100_000 }, (_, i) => `a${i}=`).join('&'), { rest: true });
      assert.equal(res.statusCode, 413);
      assert.equal(res.json().message, 'Error: Too many fields, at most 100 fields per submission');
    });

    it('ends a listing page early when its submissions are large, with a cursor to the rest', async () => {
      const listed = await createForm(ctx());
      for (let i = 0; i < 5; i++) assert.equal((await submitJson(ctx(), listed.key, { text: 'y'.repeat(9000) })).statusCode, 200);
      const first = await listSubmissions(ctx(), listed.key, '?limit=200');
      assert.equal(first.submissions.length, 2, 'two submissions of 9 KB fill a page of 20 KB');
      const second = await listSubmissions(ctx(), listed.key, `?limit=200&cursor=${first.nextCursor}`);
      const third = await listSubmissions(ctx(), listed.key, `?limit=200&cursor=${second.nextCursor}`);
      assert.deepEqual([second.submissions.length, third.submissions.length, third.nextCursor], [2, 1, null]);
      const ids = [...first.submissions, ...second.submissions, ...third.submissions].map((s) => s.id);
      assert.equal(new Set(ids).size, 5, 'every submission once');
    });

    it('puts the fields past the hundredth distinct name of a CSV export into one otherFields column', async () => {
      const wide = await createForm(ctx());
      for (let batch = 0; batch < 3; batch++) {
        const fields = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`b${batch}f${i}`, `${batch}-${i}`]));
        assert.equal((await submitJson(ctx(), wide.key, fields)).statusCode, 200);
      }
      const csv = await ctx().admin('GET', `/admin/v1/forms/${wide.key}/submissions.csv`);
      const header = csv.body.split('\r\n')[0]!.split(',');
      assert.equal(header.length, 3 + 100 + 1 + 1, 'id, createdAt, spam, 100 field columns, otherFields, files');
      assert.equal(header.at(-2), '"otherFields"');
      assert.ok(csv.body.includes('b0f49'), 'the fields past the columns are still exported');
    });

    it('leaves the honeypot field out of the CSV export, spam included (issue 31 item 15)', async () => {
      const trapped = await createForm(ctx(), { honeypot: 'website' });
      assert.equal((await submitJson(ctx(), trapped.key, { name: 'Ada', website: '' })).statusCode, 200);
      assert.equal((await submitJson(ctx(), trapped.key, { name: 'Bot', website: 'http://spam.example' })).statusCode, 200);
      const csv = await ctx().admin('GET', `/admin/v1/forms/${trapped.key}/submissions.csv?spam=all`);
      assert.equal(csv.statusCode, 200);
      const rows = csv.body.trim().split('\r\n');
      assert.deepEqual(rows[0]!.split(','), ['"id"', '"createdAt"', '"spam"', '"name"', '"files"']);
      assert.equal(rows.length, 3, csv.body);
      assert.ok(!csv.body.includes('spam.example'), 'the bait is in no cell');
    });
  },
  { FLAGPOST_MAX_TEXT_BYTES: '10000', FLAGPOST_LIST_PAGE_BYTES: '20000' },
);
