import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ADMIN_TOKEN, forEachDialect } from '../support/context.ts';
import { createForm, listSubmissions, submitJson, submitMultipart } from '../support/forms.ts';

forEachDialect(
  'admin API: forms',
  (ctx) => {
    it('creates a form with the default settings and reads, lists and deletes it', async () => {
      const created = await createForm(ctx(), { name: 'Newsletter' });
      assert.match(created.key, /^[\w-]{16}$/);
      assert.deepEqual(
        { ...created, key: undefined, createdAt: undefined, updatedAt: undefined },
        {
          key: undefined,
          name: 'Newsletter',
          projectKey: null,
          endpoint: `http://forms.example.test/v1/s/${created.key}`,
          enabled: true,
          uploadsEnabled: false,
          honeypot: '_trap',
          websites: [],
          blockedIps: [],
          successUrl: null,
          errorUrl: null,
          redirectUrl: null,
          webhookUrl: null,
          notifyEmails: [],
          slackWebhookUrl: null,
          discordWebhookUrl: null,
          retentionDays: null,
          deleteFilesAfterDelivery: false,
          captcha: null,
          notifications: null,
          autoResponse: null,
          webhooks: [],
          fieldRules: null,
          filePolicy: null,
          spamChecks: null,
          analytics: null,
          createdAt: undefined,
          updatedAt: undefined,
        },
      );
      const read = await ctx().admin('GET', `/admin/v1/forms/${created.key}`);
      assert.equal(read.statusCode, 200);
      assert.deepEqual(read.json(), created);
      const list = await ctx().admin('GET', '/admin/v1/forms');
      assert.ok(list.json().forms.some((f: { key: string }) => f.key === created.key));
      assert.equal((await ctx().admin('DELETE', `/admin/v1/forms/${created.key}`)).statusCode, 204);
      const gone = await ctx().admin('GET', `/admin/v1/forms/${created.key}`);
      assert.equal(gone.statusCode, 404);
      assert.deepEqual(gone.json(), { error: true, message: `Form with key ${created.key} does not exist` });
    });

    it('updates with PATCH semantics: an absent field keeps its value, null clears it', async () => {
      const form = await createForm(ctx(), { websites: ['https://a.example'], successUrl: 'https://a.example/thanks', notifyEmails: ['ops@a.example'] });
      const res = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { successUrl: null, uploadsEnabled: true, honeypot: null });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.successUrl, null);
      assert.equal(body.uploadsEnabled, true);
      assert.equal(body.honeypot, null);
      assert.deepEqual(body.websites, ['https://a.example']);
      assert.deepEqual(body.notifyEmails, ['ops@a.example']);
      const cleared = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { websites: null, notifyEmails: null });
      assert.deepEqual([cleared.json().websites, cleared.json().notifyEmails], [[], []]);
      const refused = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { name: null });
      assert.equal(refused.statusCode, 400);
    });

    it('validates settings with field details', async () => {
      const res = await ctx().admin('POST', '/admin/v1/forms', {
        name: 'Bad',
        successUrl: 'javascript:alert(1)',
        websites: ['not a url'],
        blockedIps: ['300.1.1.1', '10.0.0.0/33'],
        notifyEmails: ['nope'],
      });
      assert.equal(res.statusCode, 400);
      const fields = res.json().details.map((d: { field: string }) => d.field);
      assert.deepEqual(fields, ['body.successUrl', 'body.websites.0', 'body.blockedIps.0', 'body.blockedIps.1', 'body.notifyEmails.0']);
      assert.equal((await ctx().admin('POST', '/admin/v1/forms', { name: 'x', unknown: 1 })).statusCode, 400);
      assert.equal((await ctx().admin('POST', '/admin/v1/forms', {})).statusCode, 400);
    });

    it('generates a webhook signing secret, shows it once and rotates it on request', async () => {
      const form = await createForm(ctx(), { webhookUrl: 'https://hooks.example/in' });
      assert.match(String(form.webhookSecret), /^whsec_[A-Za-z0-9+/]{43}=$/);
      const read = await ctx().admin('GET', `/admin/v1/forms/${form.key}`);
      assert.equal(read.json().webhookSecret, undefined);
      const patched = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { name: 'Renamed' });
      assert.equal(patched.json().webhookSecret, undefined);
      const rotated = await ctx().admin('POST', `/admin/v1/forms/${form.key}/webhook-secret`);
      assert.equal(rotated.statusCode, 200);
      assert.notEqual(rotated.json().webhookSecret, form.webhookSecret);
      const noHook = await createForm(ctx());
      assert.equal(noHook.webhookSecret, undefined);
      const added = await ctx().admin('PATCH', `/admin/v1/forms/${noHook.key}`, { webhookUrl: 'https://hooks.example/x' });
      assert.match(added.json().webhookSecret, /^whsec_/);
      // Every answer that can carry the secret is kept by no cache (issue 8).
      const created = await ctx().admin('POST', '/admin/v1/forms', { name: 'c', webhookUrl: 'https://hooks.example/y' });
      for (const res of [created, added, rotated]) assert.equal(res.headers['cache-control'], 'no-store');
    });

    it('refuses to rotate the secret of a form without a webhook with a documented 400', async () => {
      const form = await createForm(ctx());
      const res = await ctx().admin('POST', `/admin/v1/forms/${form.key}/webhook-secret`);
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { error: true, message: 'Invalid request', details: [{ field: 'body.webhookUrl', reason: 'the form has no webhook URL' }] });
    });

    it('needs the admin token', async () => {
      const res = await ctx().app.inject({ method: 'GET', url: '/admin/v1/forms', headers: { authorization: `Bearer ${ADMIN_TOKEN}x` } });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().error, true);
    });
  },
  { FLAGPOST_PUBLIC_URL: 'http://forms.example.test' },
);

forEachDialect('admin API: submissions', (ctx) => {
  it('lists submissions newest first with cursor pagination and a spam filter', async () => {
    const form = await createForm(ctx());
    for (let i = 0; i < 5; i++) assert.equal((await submitJson(ctx(), form.key, { n: i, ...(i === 2 ? { _trap: 'bot' } : {}) })).statusCode, 200);
    const first = await listSubmissions(ctx(), form.key, '?limit=2');
    assert.deepEqual(
      first.submissions.map((s) => s.data.n),
      [4, 3],
    );
    assert.ok(first.nextCursor);
    const second = await listSubmissions(ctx(), form.key, `?limit=2&cursor=${first.nextCursor}`);
    assert.deepEqual(
      second.submissions.map((s) => s.data.n),
      [2, 1],
    );
    const third = await listSubmissions(ctx(), form.key, `?limit=2&cursor=${second.nextCursor}`);
    assert.deepEqual(
      third.submissions.map((s) => s.data.n),
      [0],
    );
    assert.equal(third.nextCursor, null);
    assert.deepEqual(
      (await listSubmissions(ctx(), form.key, '?spam=false')).submissions.map((s) => s.data.n),
      [4, 3, 1, 0],
    );
    assert.deepEqual(
      (await listSubmissions(ctx(), form.key, '?spam=true')).submissions.map((s) => s.data.n),
      [2],
    );
    const keys = Object.keys(first.submissions[0]!).sort();
    assert.deepEqual(keys, ['createdAt', 'data', 'files', 'id', 'spam', 'spamReasons']);
    assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions?cursor=garbage`)).statusCode, 400);
    assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions?spam=maybe`)).statusCode, 400);
    assert.equal((await ctx().admin('GET', '/admin/v1/forms/unknown/submissions')).statusCode, 404);
  });

  it('filters the list by the time received with since (inclusive) and until (exclusive) (issue 34)', async () => {
    const form = await createForm(ctx());
    const days = ['2026-11-01T00:00:00.000Z', '2026-11-02T00:00:00.000Z', '2026-11-03T00:00:00.000Z'];
    for (const [n, day] of days.entries()) {
      const id = (await submitJson(ctx(), form.key, { n })).json().id as string;
      await ctx().handle.db.updateTable('submissions').set({ created_at: day }).where('id', '=', id).execute();
    }
    const ns = async (query: string) => (await listSubmissions(ctx(), form.key, query)).submissions.map((s) => s.data.n);
    assert.deepEqual(await ns('?since=2026-11-02T00:00:00Z'), [2, 1]);
    assert.deepEqual(await ns('?until=2026-11-02T00:00:00Z'), [0]);
    assert.deepEqual(await ns('?since=2026-11-01T12:00:00Z&until=2026-11-03T00:00:00Z'), [1]);
    // Another offset names the same instant.
    assert.deepEqual(await ns('?since=2026-11-02T01:00:00%2B01:00'), [2, 1]);
    assert.deepEqual(await ns('?since=2026-11-01T00:00:00Z&limit=1'), [2]);
    const bad = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions?since=yesterday`);
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error, true);
  });

  it('reads one submission with its request metadata', async () => {
    const form = await createForm(ctx());
    const res = await submitJson(ctx(), form.key, { a: 1 }, { headers: { 'user-agent': 'TestAgent/1', referer: 'https://site.example/p' } });
    const one = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${res.json().id}`);
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json().meta, { ip: '127.0.0.1', userAgent: 'TestAgent/1', referer: 'https://site.example/p', origin: null, webdriver: null });
    assert.deepEqual(one.json().deliveries, []);
    const missing = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/01ARZ3NDEKTSV4RRFFQ69G5FAV`);
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().message, `Submission 01ARZ3NDEKTSV4RRFFQ69G5FAV does not exist in form ${form.key}`);
  });

  it('downloads a file as an attachment with nosniff, whatever its content type', async () => {
    const form = await createForm(ctx(), { uploadsEnabled: true });
    const html = '<script>alert(document.cookie)</script>';
    const res = await submitMultipart(ctx(), form.key, [{ name: 'page', filename: 'résumé (1).html', contentType: 'text/html', content: html }]);
    const id = res.json().id;
    const s = (await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${id}`)).json();
    const file = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${id}/files/${s.files[0].id}`);
    assert.equal(file.statusCode, 200);
    assert.equal(file.body, html);
    assert.equal(file.headers['x-content-type-options'], 'nosniff');
    assert.equal(file.headers['content-disposition'], `attachment; filename="r_sum_ (1).html"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%281%29.html`);
    assert.match(String(file.headers['content-security-policy']), /sandbox/);
    assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${id}/files/nope`)).statusCode, 404);
  });

  it('strips direction controls from download names, so none can disguise its extension (issue 8)', async () => {
    const form = await createForm(ctx(), { uploadsEnabled: true });
    const res = await submitMultipart(ctx(), form.key, [{ name: 'doc', filename: 'invoice\u202efdp.exe', content: 'MZ' }]);
    const s = (await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${res.json().id}`)).json();
    const file = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${res.json().id}/files/${s.files[0].id}`);
    assert.equal(file.headers['content-disposition'], `attachment; filename="invoicefdp.exe"; filename*=UTF-8''invoicefdp.exe`);
  });

  it('exports CSV safe against formula injection', async () => {
    const form = await createForm(ctx());
    await submitJson(ctx(), form.key, { name: '=HYPERLINK("http://evil","x")', note: 'say "hi"', list: ['a', 'b'] });
    await submitJson(ctx(), form.key, { name: '+1', extra: '-2', at: '@SUM(A1)' });
    const res = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions.csv`);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/csv/);
    assert.match(String(res.headers['content-disposition']), /^attachment;/);
    const lines = res.body.trim().split('\r\n');
    assert.equal(lines[0], '"id","createdAt","spam","name","extra","at","note","list","files"');
    assert.match(lines[1]!, /,"false","'\+1","'-2","'@SUM\(A1\)","","",""$/);
    assert.match(lines[2]!, /,"false","'=HYPERLINK\(""http:\/\/evil"",""x""\)","","","say ""hi""","a, b",""$/);
  });

  it('deletes one submission with its files; a rejected submission never stored anything', async () => {
    const form = await createForm(ctx(), { uploadsEnabled: true });
    const res = await submitMultipart(ctx(), form.key, [{ name: 'f', filename: 'a.txt', content: 'abc' }]);
    const id = res.json().id;
    const s = (await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${id}`)).json();
    assert.equal((await ctx().admin('DELETE', `/admin/v1/forms/${form.key}/submissions/${id}`)).statusCode, 204);
    assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${id}`)).statusCode, 404);
    assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${id}/files/${s.files[0].id}`)).statusCode, 404);
    assert.equal((await ctx().admin('DELETE', `/admin/v1/forms/${form.key}/submissions/${id}`)).statusCode, 404);
    const files = await ctx().handle.db.selectFrom('submission_files').select('id').where('submission_id', '=', id).execute();
    assert.deepEqual(files, []);
  });
});
