import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { signedPage, unsigned, unsignedUrl } from '../support/result-links.ts';
import { createForm, listSubmissions, submitJson, submitMultipart, submitUrlencoded } from '../support/forms.ts';

const PUBLIC = 'http://forms.example.test';
const SUCCESS_URL = `${PUBLIC}/v1/s/success?message=Your%20form%20has%20been%20submitted%20successfully!`;
const errorPage = (message: string) => `${PUBLIC}/v1/s/error?message=${encodeURIComponent(message)}`;

forEachDialect(
  'form submission: bodies and answers (contract D13, D14)',
  (ctx) => {
    let form: { key: string };
    let site: { key: string };
    before(async () => {
      form = await createForm(ctx(), { uploadsEnabled: true });
      site = await createForm(ctx(), { websites: ['https://site.example'] });
    });

    it('accepts a JSON object with mode=rest and answers the D14 success body', async () => {
      const res = await submitJson(ctx(), form.key, { email: 'ada@example.com', age: 36, tags: ['a', 'b'] });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual(unsigned(body), { success: true, code: 200, message: 'Your form has been submitted successfully!', url: SUCCESS_URL, id: body.id });
      assert.match(body.id, /^[0-9A-Z]{26}$/);
      const { submissions } = await listSubmissions(ctx(), form.key);
      assert.deepEqual(submissions[0]!.data, { email: 'ada@example.com', age: 36, tags: ['a', 'b'] });
      assert.equal(submissions[0]!.id, body.id);
    });

    it('answers a plain HTML form post (urlencoded) with a 303 to the built-in success page, goBackUrl encoded', async () => {
      const referer = 'https://site.example/contact?from=a b&x=1#top';
      const res = await submitUrlencoded(ctx(), site.key, 'name=Ada+Lovelace&note=%C3%A9t%C3%A9', { headers: { referer } });
      assert.equal(res.statusCode, 303);
      assert.equal(unsignedUrl(res.headers.location), `${SUCCESS_URL}&goBackUrl=${encodeURIComponent(referer)}`);
      const location = new URL(String(res.headers.location));
      assert.equal(location.searchParams.get('goBackUrl'), referer);
      const { submissions } = await listSubmissions(ctx(), site.key);
      assert.deepEqual(submissions[0]!.data, { name: 'Ada Lovelace', note: 'été' });
    });

    it("links back to pages of the form itself, or for a form open to any website to the Referer's origin alone", async () => {
      const res = await submitUrlencoded(ctx(), form.key, 'a=1', { headers: { referer: 'https://elsewhere.example/page?x=1' } });
      // Issue 31 item 15: the thank-you page leads back to the site the visitor came from, not to a path the Referer chose.
      assert.equal(unsignedUrl(res.headers.location), `${SUCCESS_URL}&goBackUrl=${encodeURIComponent('https://elsewhere.example/')}`);
      const page = await ctx().app.inject({
        method: 'GET',
        url: new URL(String(res.headers.location)).pathname + new URL(String(res.headers.location)).search,
      });
      assert.ok(page.body.includes('<a href="https://elsewhere.example/">Go back</a>'), page.body);
      const none = await submitUrlencoded(ctx(), form.key, 'a=1');
      assert.equal(unsignedUrl(none.headers.location), SUCCESS_URL, 'no Referer: no link');
      const listed = await submitUrlencoded(ctx(), site.key, 'a=1', { headers: { origin: 'https://site.example', referer: 'https://evil.example/' } });
      assert.equal(listed.statusCode, 303);
      assert.equal(unsignedUrl(listed.headers.location), SUCCESS_URL, "a Referer off the form's websites is no go-back target");
    });

    it('shows on the built-in pages only messages and links Flagpost issued', async () => {
      const res = await submitUrlencoded(ctx(), form.key, '');
      const page = await ctx().app.inject({
        method: 'GET',
        url: new URL(String(res.headers.location)).pathname + new URL(String(res.headers.location)).search,
      });
      assert.ok(page.body.includes('Error: The submission has no fields'), page.body);
      const forged = await ctx().app.inject({
        method: 'GET',
        url: `/v1/s/error?message=${encodeURIComponent('Your account is locked, call +1 555 0100')}&goBackUrl=${encodeURIComponent('https://evil.example/')}`,
      });
      assert.equal(forged.statusCode, 200);
      assert.ok(!forged.body.includes('Your account is locked'));
      assert.ok(!forged.body.includes('evil.example'));
      assert.ok(forged.body.includes('Your submission could not be accepted.'));
      const tampered = new URL(String(res.headers.location));
      tampered.searchParams.set('message', 'Something else');
      const tamperedPage = await ctx().app.inject({ method: 'GET', url: tampered.pathname + tampered.search });
      assert.ok(!tamperedPage.body.includes('Something else'), 'the signature covers the message');
    });

    it('keeps every value of a repeated urlencoded field as an array', async () => {
      const res = await submitUrlencoded(ctx(), form.key, 'topic=a&topic=b&topic=c&one=1', { rest: true });
      assert.equal(res.statusCode, 200, res.body);
      const { submissions } = await listSubmissions(ctx(), form.key);
      assert.deepEqual(submissions[0]!.data, { topic: ['a', 'b', 'c'], one: '1' });
    });

    it('takes multipart text fields (repeated names as arrays) and files under one name and under different names', async () => {
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
      const res = await submitMultipart(ctx(), form.key, [
        { name: 'name', value: 'Ada' },
        { name: 'color', value: 'red' },
        { name: 'color', value: 'blue' },
        { name: 'photo', filename: 'screenshot', contentType: 'image/png', content: png },
        { name: 'docs', filename: 'a.txt', contentType: 'text/plain', content: 'first' },
        { name: 'docs', filename: 'b.txt', contentType: 'text/plain', content: 'second!' },
      ]);
      assert.equal(res.statusCode, 200, res.body);
      const { submissions } = await listSubmissions(ctx(), form.key);
      const s = submissions[0]!;
      assert.deepEqual(s.data, { name: 'Ada', color: ['red', 'blue'] });
      assert.deepEqual(
        s.files.map((f: Record<string, unknown>) => [f.field, f.name, f.size, f.contentType]),
        [
          ['photo', 'screenshot', png.length, 'image/png'],
          ['docs', 'a.txt', 5, 'text/plain'],
          ['docs', 'b.txt', 7, 'text/plain'],
        ],
      );
      const file = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${s.id}/files/${s.files[0].id}`);
      assert.equal(file.statusCode, 200);
      assert.deepEqual(file.rawPayload, png);
      assert.equal(file.headers['content-type'], 'image/png');
    });

    it('skips an unused file input (empty file name, no content) of an HTML form', async () => {
      const plain = await createForm(ctx());
      const res = await submitMultipart(ctx(), plain.key, [
        { name: 'name', value: 'Ada' },
        { name: 'attachment', filename: '', content: '' },
      ]);
      assert.equal(res.statusCode, 200, res.body);
      const { submissions } = await listSubmissions(ctx(), plain.key);
      assert.deepEqual(submissions[0]!.files, []);
    });

    it('answers another content type with 415 and the JSON error object', async () => {
      const res = await ctx().app.inject({ method: 'POST', url: `/v1/s/${form.key}?mode=rest`, headers: { 'content-type': 'text/plain' }, payload: 'hello' });
      assert.equal(res.statusCode, 415);
      const message = 'Error: Unsupported Content-Type; send application/json, application/x-www-form-urlencoded or multipart/form-data';
      assert.deepEqual(unsigned(res.json()), { error: true, code: 415, message, url: errorPage(message) });
    });

    it('answers 400 for a submission with no field and no file', async () => {
      const message = 'Error: The submission has no fields';
      for (const body of ['{}', '{"_trap":""}']) {
        const res = await submitJson(ctx(), form.key, body);
        assert.equal(res.statusCode, 400, body);
        assert.deepEqual(unsigned(res.json()), { error: true, code: 400, message, url: errorPage(message) });
      }
      const empty = await ctx().app.inject({ method: 'POST', url: `/v1/s/${form.key}?mode=rest` });
      assert.equal(empty.statusCode, 400);
      assert.equal(empty.json().message, message);
      const multi = await submitMultipart(ctx(), form.key, []);
      assert.equal(multi.statusCode, 400);
      assert.equal(multi.json().message, message);
    });

    it('answers 400 (not 500) for malformed JSON, a JSON array and broken multipart', async () => {
      const message = 'Error: The submission body could not be read';
      for (const body of ['{"a":', '[1,2]', '"text"', 'null']) {
        const res = await submitJson(ctx(), form.key, body);
        assert.equal(res.statusCode, 400, body);
        assert.deepEqual(unsigned(res.json()), { error: true, code: 400, message, url: errorPage(message) });
      }
      const broken = await ctx().app.inject({
        method: 'POST',
        url: `/v1/s/${form.key}?mode=rest`,
        headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
        payload: '--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue-without-end',
      });
      assert.equal(broken.statusCode, 400);
      assert.equal(broken.json().message, message);
      const noBoundary = await ctx().app.inject({
        method: 'POST',
        url: `/v1/s/${form.key}?mode=rest`,
        headers: { 'content-type': 'multipart/form-data' },
        payload: 'x',
      });
      assert.equal(noBoundary.statusCode, 400);
    });

    it('redirects to the form success URL (keeping its query) and errors to its error URL, going back to redirectUrl', async () => {
      const custom = await createForm(ctx(), {
        successUrl: 'https://site.example/thanks?lang=en',
        errorUrl: 'https://site.example/oops',
        redirectUrl: 'https://site.example/contact',
      });
      const ok = await submitUrlencoded(ctx(), custom.key, 'a=1', { headers: { referer: 'https://elsewhere.example/' } });
      assert.equal(ok.statusCode, 303);
      assert.equal(
        ok.headers.location,
        'https://site.example/thanks?lang=en&message=Your%20form%20has%20been%20submitted%20successfully!&goBackUrl=https%3A%2F%2Fsite.example%2Fcontact',
      );
      const bad = await submitUrlencoded(ctx(), custom.key, '');
      assert.equal(bad.statusCode, 303);
      assert.equal(
        bad.headers.location,
        'https://site.example/oops?message=Error%3A%20The%20submission%20has%20no%20fields&goBackUrl=https%3A%2F%2Fsite.example%2Fcontact',
      );
      const rest = await submitJson(ctx(), custom.key, { a: 1 });
      assert.equal(rest.json().url, ok.headers.location);
    });

    it('serves the built-in pages with the message escaped and only an http(s) back link', async () => {
      const res = await ctx().app.inject({
        method: 'GET',
        url: signedPage(ctx(), '/v1/s/error', '<script>alert(1)</script>', 'javascript:alert(1)'),
      });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.ok(res.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
      assert.ok(!res.body.includes('<script>'));
      assert.ok(!res.body.includes('javascript:'));
      const ok = await ctx().app.inject({ method: 'GET', url: signedPage(ctx(), '/v1/s/success', 'Thanks', 'https://site.example/a?b=1&c=2') });
      assert.ok(ok.body.includes('<a href="https://site.example/a?b=1&amp;c=2">Go back</a>'));
      assert.ok(ok.body.includes('Thanks'));
    });
  },
  { FLAGPOST_PUBLIC_URL: PUBLIC },
);

forEachDialect(
  'form submission: refusals (contract D15, D17, D19)',
  (ctx) => {
    const count = async (key: string) => (await listSubmissions(ctx(), key, '?limit=200')).submissions.length;

    it('answers 404 for an unknown form, as JSON in rest mode and as a 303 to the error page otherwise', async () => {
      const message = 'Error: Form with key nope does not exist';
      const rest = await submitJson(ctx(), 'nope', { a: 1 });
      assert.equal(rest.statusCode, 404);
      assert.deepEqual(unsigned(rest.json()), { error: true, code: 404, message, url: errorPage(message) });
      const html = await submitUrlencoded(ctx(), 'nope', 'a=1');
      assert.equal(html.statusCode, 303);
      assert.equal(unsignedUrl(html.headers.location), errorPage(message));
    });

    it('answers 409 for a disabled form and stores nothing', async () => {
      const form = await createForm(ctx(), { enabled: false });
      const res = await submitJson(ctx(), form.key, { a: 1 });
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().message, 'Error: This form is not accepting submissions');
      assert.equal(res.json().code, 409);
      assert.equal(await count(form.key), 0);
    });

    it('allows listed websites by Origin or Referer and refuses others with 403', async () => {
      const form = await createForm(ctx(), { websites: ['https://site.example/some/path'] });
      const message = 'Error: Submissions from this website are not allowed for this form';
      const byOrigin = await submitJson(ctx(), form.key, { a: 1 }, { headers: { origin: 'https://site.example' } });
      assert.equal(byOrigin.statusCode, 200, byOrigin.body);
      assert.equal(byOrigin.headers['access-control-allow-origin'], 'https://site.example');
      const byReferer = await submitJson(ctx(), form.key, { a: 1 }, { headers: { referer: 'https://site.example/contact' } });
      assert.equal(byReferer.statusCode, 200);
      const refused: Record<string, string>[] = [{ origin: 'https://evil.example' }, { referer: 'http://site.example/' }, {}, { origin: 'null' }];
      for (const headers of refused) {
        const res = await submitJson(ctx(), form.key, { a: 1 }, { headers });
        assert.equal(res.statusCode, 403, JSON.stringify(headers));
        assert.equal(res.json().message, message);
        assert.equal(res.headers['access-control-allow-origin'], undefined);
      }
      assert.equal(await count(form.key), 2);
    });

    it('refuses blocked addresses and ranges with 403', async () => {
      const form = await createForm(ctx(), { blockedIps: ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32'] });
      const message = 'Error: Submissions from your address are not allowed for this form';
      for (const remoteAddress of ['203.0.113.7', '198.51.100.99', '::ffff:203.0.113.7', '2001:db8::1']) {
        const res = await ctx().app.inject({
          method: 'POST',
          url: `/v1/s/${form.key}?mode=rest`,
          headers: { 'content-type': 'application/json' },
          payload: '{"a":1}',
          remoteAddress,
        });
        assert.equal(res.statusCode, 403, remoteAddress);
        assert.equal(res.json().message, message);
      }
      const ok = await ctx().app.inject({
        method: 'POST',
        url: `/v1/s/${form.key}?mode=rest`,
        headers: { 'content-type': 'application/json' },
        payload: '{"a":1}',
        remoteAddress: '203.0.113.8',
      });
      assert.equal(ok.statusCode, 200);
      assert.equal(await count(form.key), 1);
    });

    it('refuses files with 403 when uploads are off (the default)', async () => {
      const form = await createForm(ctx());
      const res = await submitMultipart(ctx(), form.key, [
        { name: 'a', value: '1' },
        { name: 'cv', filename: 'cv.pdf', contentType: 'application/pdf', content: '%PDF' },
      ]);
      assert.equal(res.statusCode, 403);
      const message = 'Error: File uploads are not enabled for this form';
      assert.deepEqual(unsigned(res.json()), { error: true, code: 403, message, url: errorPage(message) });
      assert.equal(await count(form.key), 0);
    });

    it('answers a filled honeypot like a success, keeps it as spam and the default honeypot is _trap', async () => {
      const form = await createForm(ctx());
      const res = await submitUrlencoded(ctx(), form.key, 'email=bot%40spam.example&_trap=gotcha', { rest: true });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().success, true);
      const custom = await createForm(ctx(), { honeypot: 'website' });
      assert.equal((await submitJson(ctx(), custom.key, { email: 'x@y.z', website: 'http://spam' })).statusCode, 200);
      assert.equal((await submitJson(ctx(), custom.key, { email: 'x@y.z', website: '' })).statusCode, 200);
      const all = await listSubmissions(ctx(), custom.key);
      assert.deepEqual(
        all.submissions.map((s) => [s.spam, s.data]),
        [
          [false, { email: 'x@y.z' }],
          [true, { email: 'x@y.z', website: 'http://spam' }],
        ],
      );
      assert.equal((await listSubmissions(ctx(), form.key, '?spam=true')).submissions.length, 1);
      assert.equal((await listSubmissions(ctx(), form.key, '?spam=false')).submissions.length, 0);
    });

    it('answers CORS preflights per form (contract D19)', async () => {
      const open = await createForm(ctx());
      const closed = await createForm(ctx(), { websites: ['https://site.example'] });
      const preflight = (key: string, origin: string) =>
        ctx().app.inject({
          method: 'OPTIONS',
          url: `/v1/s/${key}?mode=rest`,
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
        });
      const any = await preflight(open.key, 'https://whoever.example');
      assert.equal(any.statusCode, 204);
      assert.equal(any.headers['access-control-allow-origin'], '*');
      assert.match(String(any.headers['access-control-allow-methods']), /POST/);
      assert.match(String(any.headers['access-control-allow-headers']), /Content-Type/i);
      const listed = await preflight(closed.key, 'https://site.example');
      assert.equal(listed.headers['access-control-allow-origin'], 'https://site.example');
      assert.match(String(listed.headers.vary), /Origin/);
      const other = await preflight(closed.key, 'https://evil.example');
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      const post = await submitJson(ctx(), open.key, { a: 1 }, { headers: { origin: 'https://whoever.example' } });
      assert.equal(post.headers['access-control-allow-origin'], '*');
    });
  },
  { FLAGPOST_PUBLIC_URL: PUBLIC },
);

forEachDialect('form submission: field names that are prototype machinery (issue 8)', (ctx) => {
  it('refuses __proto__, constructor and prototype alike on every encoding and stores nothing', async () => {
    const form = await createForm(ctx());
    const unreadable = { error: true, code: 400, message: 'Error: The submission body could not be read' };
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      const answers = [
        await submitJson(ctx(), form.key, `{"email":"a@b.example","${name}":{"x":1}}`),
        await submitJson(ctx(), form.key, `{"email":"a@b.example","${name}":"x"}`),
        await submitUrlencoded(ctx(), form.key, `email=a%40b.example&${name}=x`, { rest: true }),
        await submitMultipart(ctx(), form.key, [
          { name: 'email', value: 'a@b.example' },
          { name, value: 'x' },
        ]),
      ];
      for (const [i, res] of answers.entries()) {
        assert.equal(res.statusCode, 400, `${name} #${i}: ${res.body}`);
        const { url, ...body } = res.json() as Record<string, unknown>;
        assert.deepEqual(body, unreadable, `${name} #${i}`);
        assert.equal(typeof url, 'string');
      }
    }
    assert.equal((await listSubmissions(ctx(), form.key)).submissions.length, 0);
  });
});

forEachDialect('form submission: multipart parts without a name or a file name (issue 8)', (ctx) => {
  const boundary = 'XBOUND';
  const send = (formKey: string, parts: string[]) =>
    ctx().app.inject({
      method: 'POST',
      url: `/v1/s/${formKey}?mode=rest`,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}--${boundary}--\r\n`,
    });
  const field = 'Content-Disposition: form-data; name="email"\r\n\r\nada@example.com';

  it('refuses a part without a name instead of storing it under "undefined"', async () => {
    const form = await createForm(ctx());
    for (const disposition of ['form-data', 'form-data; name=""']) {
      const res = await send(form.key, [`Content-Disposition: ${disposition}\r\n\r\nvalue`, field]);
      assert.equal(res.statusCode, 400, disposition);
      assert.equal(res.json().message, 'Error: The submission body could not be read');
    }
    assert.equal((await listSubmissions(ctx(), form.key)).submissions.length, 0);
  });

  it('keeps a file part without a file name as a file, and ignores an empty file input', async () => {
    const form = await createForm(ctx(), { uploadsEnabled: true });
    const res = await send(form.key, [
      'Content-Disposition: form-data; name="scan"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7',
      'Content-Disposition: form-data; name="empty"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n',
      field,
    ]);
    assert.equal(res.statusCode, 200, res.body);
    const { submissions } = await listSubmissions(ctx(), form.key);
    assert.deepEqual(submissions[0]!.data, { email: 'ada@example.com' });
    assert.deepEqual(
      submissions[0]!.files.map((f: { field: string; name: string; size: number; contentType: string }) => [f.field, f.name, f.size, f.contentType]),
      [['scan', 'scan', 8, 'application/pdf']],
    );
  });
});
