import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createClient, isSubmissionError } from '@formspree/core';
import { forEachDialect } from '../support/context.ts';
import { createForm, listSubmissions, multipart } from '../support/forms.ts';
import { freePort } from '../support/process.ts';

// Issue 34, the Formspree drop-in: the published @formspree/core, as a site runs it, with its endpoint
// option set to <Flagpost>/formspree, against a listening Flagpost; and the wire format it relies on.

const session = (data: unknown) => Buffer.from(JSON.stringify(data)).toString('base64');

function exe(): Buffer {
  const bytes = Buffer.alloc(512);
  bytes.write('MZ', 0, 'latin1');
  bytes.writeUInt32LE(0x80, 0x3c);
  bytes.write('PE\0\0', 0x80, 'latin1');
  return bytes;
}

forEachDialect('Formspree drop-in: /formspree/f/{formKey} (issue 34)', (ctx) => {
  let base: string;
  let endpoint: string;
  let form: { key: string };
  before(async () => {
    const port = freePort();
    base = `http://127.0.0.1:${port}`;
    endpoint = `${base}/formspree`;
    await ctx().app.listen({ port, host: '127.0.0.1' });
    form = await createForm(ctx(), {
      uploadsEnabled: true,
      fieldRules: { properties: { email: { type: 'string', format: 'email' }, message: { type: 'string', minLength: 1 } }, required: ['email'] },
      filePolicy: { allowedTypes: ['application/pdf', 'image/*'] },
    });
  });
  after(async () => {
    await ctx().app.close();
  });

  it('takes a JSON submission from @formspree/core and answers ok with the thank-you page as next', async () => {
    const client = createClient();
    const result = await client.submitForm(form.key, { email: 'ada@example.com', message: 'Hello' }, { endpoint });
    assert.equal(result.kind, 'success', JSON.stringify(result));
    assert.ok(!isSubmissionError(result));
    assert.match(result.next, /\/v1\/s\/success\?message=/);
    const { submissions } = await listSubmissions(ctx(), form.key);
    assert.deepEqual(submissions[0]!.data, { email: 'ada@example.com', message: 'Hello' });
  });

  it("gives @formspree/core the field errors of the form's rules, as Formspree codes", async () => {
    const result = await createClient().submitForm(form.key, { email: 'not-an-email', message: 'Hi' }, { endpoint });
    assert.ok(isSubmissionError(result));
    assert.deepEqual(result.getFieldErrors('email'), [{ code: 'TYPE_EMAIL', message: 'should be an email' }]);
    const missing = await createClient().submitForm(form.key, { message: 'Hi' } as Record<string, string>, { endpoint });
    assert.ok(isSubmissionError(missing));
    assert.deepEqual(
      missing.getFieldErrors('email').map((e) => e.code),
      ['REQUIRED_FIELD_MISSING'],
    );
  });

  it('takes multipart FormData with a file, and refuses an .exe renamed .pdf as a form error', async () => {
    const data = new FormData();
    data.append('email', 'ada@example.com');
    data.append('cv', new Blob(['%PDF-1.7\n%%EOF\n'], { type: 'application/pdf' }), 'cv.pdf');
    const ok = await createClient().submitForm(form.key, data, { endpoint });
    assert.equal(ok.kind, 'success', JSON.stringify(ok));
    const { submissions } = await listSubmissions(ctx(), form.key);
    assert.deepEqual(
      submissions[0]!.files.map((f: { name: string }) => f.name),
      ['cv.pdf'],
    );
    const bad = new FormData();
    bad.append('email', 'ada@example.com');
    bad.append('cv', new Blob([new Uint8Array(exe())], { type: 'application/pdf' }), 'cv.pdf');
    const refused = await createClient().submitForm(form.key, bad, { endpoint });
    assert.ok(isSubmissionError(refused));
    assert.deepEqual(refused.getFormErrors(), [{ code: 'UNSPECIFIED', message: 'Error: File "cv.pdf" is not an allowed type' }]);
  });

  it("answers an unknown form, a refused website and a too large file with Formspree's form codes and statuses", async () => {
    const unknown = await createClient().submitForm('nope', { email: 'a@b.co' }, { endpoint });
    assert.ok(isSubmissionError(unknown));
    assert.equal(unknown.getFormErrors()[0]!.code, 'FORM_NOT_FOUND');

    const site = await createForm(ctx(), { websites: ['https://shop.example'] });
    const blocked = await ctx().app.inject({
      method: 'POST',
      url: `/formspree/f/${site.key}`,
      headers: { 'content-type': 'application/json', accept: 'application/json', origin: 'https://evil.example' },
      payload: JSON.stringify({ email: 'a@b.co' }),
    });
    assert.equal(blocked.statusCode, 403);
    assert.deepEqual(blocked.json(), { errors: [{ code: 'BLOCKED', message: 'Error: Submissions from this website are not allowed for this form' }] });

    const body = multipart([{ name: 'f', filename: 'big.pdf', content: Buffer.alloc(1048577) }]);
    const big = await ctx().app.inject({
      method: 'POST',
      url: `/formspree/f/${form.key}`,
      headers: { 'content-type': body.contentType, accept: 'application/json' },
      payload: body.payload,
    });
    assert.equal(big.statusCode, 413);
    assert.deepEqual(big.json(), { errors: [{ code: 'FILES_TOO_BIG', message: 'Error: File "big.pdf" exceeds the 1.00MB upload limit' }] });

    const rules = await ctx().app.inject({
      method: 'POST',
      url: `/formspree/f/${form.key}`,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      payload: JSON.stringify({ email: 'x' }),
    });
    assert.equal(rules.statusCode, 422);
    assert.deepEqual(rules.json(), { errors: [{ field: 'email', code: 'TYPE_EMAIL', message: 'should be an email' }] });
  });

  it('applies every form setting as /v1/s does: disabled, honeypot, blocked address', async () => {
    const off = await createForm(ctx(), { enabled: false });
    const disabled = await ctx().app.inject({
      method: 'POST',
      url: `/formspree/f/${off.key}`,
      headers: { 'content-type': 'application/json' },
      payload: '{"a":1}',
    });
    assert.equal(disabled.statusCode, 409);
    assert.equal(disabled.json().errors[0].code, 'INACTIVE');
    const trap = await createForm(ctx(), { honeypot: '_gotcha' });
    const spam = await ctx().app.inject({
      method: 'POST',
      url: `/formspree/f/${trap.key}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'a@b.co', _gotcha: 'bot' }),
    });
    assert.equal(spam.statusCode, 200);
    const { submissions } = await listSubmissions(ctx(), trap.key, '?spam=true');
    assert.equal(submissions.length, 1);
    assert.deepEqual(submissions[0]!.spamReasons, [{ check: 'honeypot', detail: 'the field "_gotcha" was filled' }]);
    const blocked = await createForm(ctx(), { blockedIps: ['127.0.0.0/8'] });
    const res = await ctx().app.inject({
      method: 'POST',
      url: `/formspree/f/${blocked.key}`,
      headers: { 'content-type': 'application/json' },
      payload: '{"a":1}',
    });
    assert.equal(res.statusCode, 403);
    assert.equal(res.json().errors[0].code, 'BLOCKED');
  });

  it("allows Formspree's headers in its CORS preflight, for the form's websites", async () => {
    const site = await createForm(ctx(), { websites: ['https://shop.example'] });
    const res = await ctx().app.inject({
      method: 'OPTIONS',
      url: `/formspree/f/${site.key}`,
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'formspree-client,formspree-session-data',
      },
    });
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['access-control-allow-origin'], 'https://shop.example');
    assert.match(String(res.headers['access-control-allow-headers']), /Formspree-Client/);
    assert.match(String(res.headers['access-control-allow-headers']), /Formspree-Session-Data/);
    const v1 = await ctx().app.inject({ method: 'OPTIONS', url: `/v1/s/${site.key}`, headers: { origin: 'https://shop.example' } });
    assert.equal(v1.headers['access-control-allow-headers'], 'Content-Type, Accept', '/v1/s keeps its own preflight');
  });

  it('records the webdriver flag of Formspree-Session-Data without calling the submission spam', async () => {
    const plain = await createForm(ctx(), {});
    const res = await ctx().app.inject({
      method: 'POST',
      url: `/formspree/f/${plain.key}`,
      headers: {
        'content-type': 'application/json',
        'formspree-client': '@formspree/core@4.0.0',
        'formspree-session-data': session({ loadedAt: Date.now() - 60_000, webdriver: true }),
      },
      payload: JSON.stringify({ email: 'a@b.co' }),
    });
    assert.equal(res.statusCode, 200, res.body);
    const row = await ctx()
      .handle.db.selectFrom('submissions')
      .select(['webdriver', 'spam'])
      .where('id', '=', (await listSubmissions(ctx(), plain.key)).submissions[0]!.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.webdriver), 1);
    assert.equal(Number(row.spam), 0);
    for (const junk of ['%%%', session([1]), session({ loadedAt: 'x', webdriver: 'yes' }), 'x'.repeat(5000)]) {
      const ok = await ctx().app.inject({
        method: 'POST',
        url: `/formspree/f/${plain.key}`,
        headers: { 'content-type': 'application/json', 'formspree-session-data': junk },
        payload: JSON.stringify({ email: 'a@b.co' }),
      });
      assert.equal(ok.statusCode, 200, 'session data that is not readable is ignored');
    }
  });

  it('leaves /v1/s as the specification has it: mode=rest JSON only, redirects otherwise', async () => {
    const res = await ctx().app.inject({
      method: 'POST',
      url: `/v1/s/${form.key}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'x' }),
    });
    assert.equal(res.statusCode, 303);
    const rest = await ctx().app.inject({
      method: 'POST',
      url: `/v1/s/${form.key}?mode=rest`,
      headers: { 'content-type': 'application/json' },
      payload: '{"email":"a@b.co"}',
    });
    assert.deepEqual(Object.keys(rest.json()).sort(), ['code', 'id', 'message', 'success', 'url']);
  });
});
