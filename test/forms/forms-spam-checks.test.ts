import assert from 'node:assert/strict';
import { it } from 'node:test';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { forEachDialect } from '../support/context.ts';
import { createForm, listSubmissions, startWebhookReceiver, submitJson, submitUrlencoded, waitFor } from '../support/forms.ts';

const session = (data: unknown) => Buffer.from(JSON.stringify(data)).toString('base64');

forEachDialect(
  'form spam checks with reasons (issue 34)',
  (ctx) => {
    const reasonsOf = async (formKey: string) => (await listSubmissions(ctx(), formKey)).submissions.map((s) => [s.spam, s.spamReasons]);

    it('calls a repeat of the same normalised fields within the window a duplicate, with its reason', async () => {
      const form = await createForm(ctx(), { spamChecks: { duplicates: { enabled: true, windowMinutes: 10 } } });
      assert.equal((await submitJson(ctx(), form.key, { email: 'ada@example.com', message: 'Hello there' })).statusCode, 200);
      assert.equal((await submitJson(ctx(), form.key, { message: '  hello   THERE ', email: 'Ada@example.com' })).statusCode, 200);
      assert.equal((await submitJson(ctx(), form.key, { email: 'ada@example.com', message: 'Another one' })).statusCode, 200);
      assert.deepEqual(await reasonsOf(form.key), [
        [false, []],
        [true, [{ check: 'duplicate', detail: 'the same fields were submitted within 10 minutes' }]],
        [false, []],
      ]);
    });

    it('measures the fill time from the signed render timestamp or Formspree’s page-load time', async () => {
      const form = await createForm(ctx(), { spamChecks: { minFillSeconds: 3 } });
      const rendered = await ctx().app.inject({ method: 'GET', url: `/v1/s/${form.key}/rendered` });
      assert.equal(rendered.statusCode, 200);
      const { field, token } = rendered.json();
      assert.equal(field, '_flagpost_rendered');
      // Sent at once: too fast. The token is no field of the submission.
      assert.equal((await submitJson(ctx(), form.key, { a: 'fast', [field]: token })).statusCode, 200);
      const [at, signature] = token.split('.');
      const forged = `${Number(at) - 60_000}.${signature}`;
      assert.equal((await submitJson(ctx(), form.key, { a: 'forged', [field]: forged })).statusCode, 200);
      assert.equal((await submitJson(ctx(), form.key, { a: 'none' })).statusCode, 200);
      const slow = await ctx().app.inject({
        method: 'POST',
        url: `/formspree/f/${form.key}`,
        headers: { 'content-type': 'application/json', 'formspree-session-data': session({ loadedAt: Date.now() - 10_000, webdriver: false }) },
        payload: JSON.stringify({ a: 'slow' }),
      });
      assert.equal(slow.statusCode, 200);
      const rows = (await listSubmissions(ctx(), form.key)).submissions;
      assert.deepEqual(
        rows.map((s) => [s.data, s.spam, s.spamReasons.map((r: { check: string }) => r.check)]),
        [
          [{ a: 'slow' }, false, []],
          [{ a: 'none' }, true, ['minFillTime']],
          [{ a: 'forged' }, true, ['minFillTime']],
          [{ a: 'fast' }, true, ['minFillTime']],
        ],
      );
      assert.match(rows[3]!.spamReasons[0].detail, /^sent \d+\.\d s after the form was rendered \(at least 3 s\)$/);
      assert.equal(
        rows[2]!.spamReasons[0].detail,
        'no render timestamp (the form snippet or Formspree-Session-Data)',
        'a token with a wrong signature counts for nothing',
      );
    });

    it('calls an address on a disposable e-mail domain spam', async () => {
      const form = await createForm(ctx(), { spamChecks: { disposableEmails: true } });
      await submitJson(ctx(), form.key, { email: 'someone@mailinator.com' });
      await submitJson(ctx(), form.key, { email: 'ada@example.com' });
      assert.deepEqual(await reasonsOf(form.key), [
        [false, []],
        [true, [{ check: 'disposableEmail', detail: 'email: mailinator.com is a disposable e-mail domain' }]],
      ]);
    });

    it("applies rules written with the targeting engine's conditions: matches, in, inCidr on the address", async () => {
      const form = await createForm(ctx(), {
        spamChecks: {
          rules: [
            { attribute: 'message', operator: 'matches', values: ['(?i)\\bviagra\\b'] },
            { attribute: 'country', operator: 'in', values: ['XX', 'YY'] },
            { attribute: 'request.ip', operator: 'inCidr', values: ['10.0.0.0/8'] },
          ],
        },
      });
      await submitJson(ctx(), form.key, { message: 'Buy VIAGRA now', country: 'DE' });
      await submitJson(ctx(), form.key, { message: 'Hello', country: 'YY' });
      await submitJson(ctx(), form.key, { message: 'Hello', country: 'DE' });
      await ctx().app.inject({
        method: 'POST',
        url: `/v1/s/${form.key}?mode=rest`,
        remoteAddress: '10.1.2.3',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ message: 'Hi', country: 'DE' }),
      });
      assert.deepEqual(await reasonsOf(form.key), [
        [true, [{ check: 'rule', detail: 'rule 3: request.ip inCidr "10.0.0.0/8"' }]],
        [false, []],
        [true, [{ check: 'rule', detail: 'rule 2: country in "XX", "YY"' }]],
        [true, [{ check: 'rule', detail: 'rule 1: message matches "(?i)\\\\bviagra\\\\b"' }]],
      ]);
      const bad = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, {
        spamChecks: { rules: [{ attribute: 'm', operator: 'matches', values: ['(a)\\1'] }] },
      });
      assert.equal(bad.statusCode, 400, 'a rule is checked as a targeting condition when saved');
    });

    it('refuses submissions over the per-form rate limit with 429, storing nothing', async () => {
      const form = await createForm(ctx(), { spamChecks: { rateLimit: { perAddress: 2 } } });
      assert.equal((await submitJson(ctx(), form.key, { n: 1 })).statusCode, 200);
      assert.equal((await submitJson(ctx(), form.key, { n: 2 })).statusCode, 200);
      const third = await submitJson(ctx(), form.key, { n: 3 });
      assert.equal(third.statusCode, 429);
      assert.equal(third.json().message, 'Error: Too many submissions to this form right now, please try again later');
      assert.equal(third.headers['retry-after'], '60');
      const other = await ctx().app.inject({
        method: 'POST',
        url: `/v1/s/${form.key}?mode=rest`,
        remoteAddress: '192.0.2.7',
        headers: { 'content-type': 'application/json' },
        payload: '{"n":4}',
      });
      assert.equal(other.statusCode, 200, 'another address has its own count');
      const all = await createForm(ctx(), { spamChecks: { rateLimit: { perMinute: 1 } } });
      assert.equal((await submitJson(ctx(), all.key, { n: 1 })).statusCode, 200);
      const over = await ctx().app.inject({
        method: 'POST',
        url: `/v1/s/${all.key}?mode=rest`,
        remoteAddress: '192.0.2.8',
        headers: { 'content-type': 'application/json' },
        payload: '{"n":2}',
      });
      assert.equal(over.statusCode, 429);
      assert.equal((await listSubmissions(ctx(), all.key)).submissions.length, 1);
    });

    it('holds the rate limit for a burst of submissions sent at once, and keeps its counts per second', async () => {
      const form = await createForm(ctx(), { spamChecks: { rateLimit: { perMinute: 3 } } });
      // Ten at once: none is committed when the others are checked; only three may pass.
      const answers = await Promise.all(Array.from({ length: 10 }, (_, n) => submitJson(ctx(), form.key, { n })));
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
      assert.equal((await listSubmissions(ctx(), form.key)).submissions.length, 3);
      const { id } = await ctx().handle.db.selectFrom('forms').select('id').where('key', '=', form.key).executeTakeFirstOrThrow();
      const counts = await ctx().handle.db.selectFrom('form_rate_counts').select(['scope', 'n']).where('form_id', '=', id).execute();
      assert.equal(
        counts.reduce((sum, c) => sum + Number(c.n), 0),
        3,
        'the refused submissions count for nothing',
      );
      // A retention round deletes the counts the window has left behind, and keeps those it still needs.
      await ctx().services.retention.runOnce();
      assert.ok((await ctx().handle.db.selectFrom('form_rate_counts').select('n').where('form_id', '=', id).execute()).length > 0);
      await ctx().handle.db.updateTable('form_rate_counts').set({ second: 1_000 }).where('form_id', '=', id).execute();
      await ctx().services.retention.runOnce();
      assert.equal((await ctx().handle.db.selectFrom('form_rate_counts').select('n').where('form_id', '=', id).execute()).length, 0);
      assert.equal((await submitJson(ctx(), form.key, { n: 'after' })).statusCode, 200, 'counts older than the window do not count');
    });

    it('filters the inbox by the check that called a submission spam', async () => {
      const form = await createForm(ctx(), { spamChecks: { disposableEmails: true, duplicates: { enabled: true } } });
      await submitJson(ctx(), form.key, { email: 'a@mailinator.com' });
      await submitJson(ctx(), form.key, { email: 'ok@example.com', m: 'x' });
      await submitJson(ctx(), form.key, { email: 'ok@example.com', m: 'x' });
      await submitUrlencoded(ctx(), form.key, '_trap=bot&m=y', { rest: true });
      const ids = async (check: string) => (await listSubmissions(ctx(), form.key, `?spamCheck=${check}`)).submissions.map((s) => s.spamReasons[0].check);
      assert.deepEqual(await ids('duplicate'), ['duplicate']);
      assert.deepEqual(await ids('disposableEmail'), ['disposableEmail']);
      assert.deepEqual(await ids('honeypot'), ['honeypot']);
      assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions?spamCheck=nope`)).statusCode, 400);
    });

    it('sends the deliveries spam skipped when a submission is marked not spam, once', async () => {
      const receiver = await startWebhookReceiver();
      try {
        const form = await createForm(ctx(), { webhookUrl: receiver.url, spamChecks: { disposableEmails: true } });
        const res = await submitJson(ctx(), form.key, { email: 'x@mailinator.com' });
        const id = res.json().id;
        const detail = await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${id}`);
        assert.deepEqual(detail.json().deliveries, []);
        const marked = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}/submissions/${id}`, { spam: false });
        assert.equal(marked.statusCode, 200);
        assert.deepEqual(marked.json().spamReasons, []);
        await waitFor(() => receiver.received.length === 1, 5000, 'the webhook of the submission marked not spam');
        assert.equal(JSON.parse(receiver.received[0]!.body).submissionId, id);
        await ctx().admin('PATCH', `/admin/v1/forms/${form.key}/submissions/${id}`, { spam: true });
        const again = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}/submissions/${id}`, { spam: false });
        assert.equal(again.json().deliveries.length, 1, 'a submission already delivered is not delivered again');
        assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions/${id}`)).json().spamReasons.length, 0);
      } finally {
        await receiver.close();
      }
    });

    it('shows what changed spam checks would decide for the last submissions, saving nothing', async () => {
      const form = await createForm(ctx(), {});
      await submitJson(ctx(), form.key, { email: 'a@mailinator.com', message: 'hi' });
      await submitJson(ctx(), form.key, { email: 'b@example.com', message: 'cheap pills' });
      await submitJson(ctx(), form.key, { email: 'b@example.com', message: 'cheap pills' });
      await submitJson(ctx(), form.key, { email: 'c@example.com', message: 'fine' });
      const res = await ctx().admin('POST', `/admin/v1/forms/${form.key}/spam-rules/dry-run`, {
        spamChecks: { disposableEmails: true, duplicates: { enabled: true }, rules: [{ attribute: 'message', operator: 'contains', values: ['pills'] }] },
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.checked, 4);
      assert.equal(body.spam, 3);
      assert.deepEqual(
        body.changed.map((c: { spamBefore: boolean; spamAfter: boolean; spamReasons: Array<{ check: string }> }) => [
          c.spamBefore,
          c.spamAfter,
          c.spamReasons.map((r) => r.check),
        ]),
        [
          [false, true, ['duplicate', 'rule']],
          [false, true, ['rule']],
          [false, true, ['disposableEmail']],
        ],
      );
      assert.equal((await listSubmissions(ctx(), form.key, '?spam=true')).submissions.length, 0, 'nothing changed');
      const bad = await ctx().admin('POST', `/admin/v1/forms/${form.key}/spam-rules/dry-run`, {
        spamChecks: { rules: [{ attribute: 'a', operator: 'nope', values: [] }] },
      });
      assert.equal(bad.statusCode, 400);
    });
  },
  // The webhook receiver listens on loopback.
  { FLAGPOST_WEBHOOK_TARGETS: 'private', FLAGPOST_OUTBOX_POLL_MS: '20' },
);

forEachDialect('form proof of work with ALTCHA (issue 34)', (ctx) => {
  /** Solves a challenge as the ALTCHA widget does in a browser, with ALTCHA's own library. */
  async function solve(formKey: string): Promise<string> {
    const res = await ctx().app.inject({ method: 'GET', url: `/v1/s/${formKey}/challenge` });
    assert.equal(res.statusCode, 200, res.body);
    const challenge = res.json();
    const solution = await solveChallenge({ challenge, deriveKey });
    assert.ok(solution);
    return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
  }

  it('takes a submission with a solved challenge once, and refuses none, a wrong one, a replay and another form’s', async () => {
    const form = await createForm(ctx(), { spamChecks: { proofOfWork: true } });
    const altcha = await solve(form.key);
    const ok = await submitJson(ctx(), form.key, { message: 'hi', altcha });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual((await listSubmissions(ctx(), form.key)).submissions[0]!.data, { message: 'hi' }, 'the solution is no field');
    const replay = await submitJson(ctx(), form.key, { message: 'again', altcha });
    assert.equal(replay.statusCode, 403);
    assert.equal(replay.json().message, 'Error: The verification failed, please try again');
    const none = await submitJson(ctx(), form.key, { message: 'none' });
    assert.equal(none.statusCode, 400);
    assert.equal(none.json().message, 'Error: Please complete the verification before submitting');
    assert.equal((await submitJson(ctx(), form.key, { message: 'junk', altcha: 'bm9wZQ==' })).statusCode, 403);
    const other = await createForm(ctx(), { spamChecks: { proofOfWork: true } });
    assert.equal((await submitJson(ctx(), other.key, { message: 'x', altcha: await solve(form.key) })).statusCode, 403);
    assert.equal((await listSubmissions(ctx(), form.key)).submissions.length, 1);
    const plain = await createForm(ctx(), {});
    assert.equal((await submitJson(ctx(), plain.key, { altcha: 'kept as data' })).statusCode, 200, 'a form that asks for none keeps the field');
  });
});
