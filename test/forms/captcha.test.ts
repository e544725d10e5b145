import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, it } from 'node:test';
import pino from 'pino';
import { forEachDialect } from '../support/context.ts';
import { createForm, submitJson, submitMultipart, submitUrlencoded } from '../support/forms.ts';

// Issue 12: CAPTCHA verification. A local server answers like the providers' siteverify endpoints; the
// token decides its behaviour. Every refusal stores nothing; the token field is never stored; the
// secret is sent to the verifier and never appears in an admin answer or a log line.

interface Verification {
  path: string;
  secret: string | null;
  response: string | null;
  remoteip: string | null;
}
const seen: Verification[] = [];
const logged: string[] = [];

/** Behaviour by token: ok, ok-low (score 0.2), bad, slow (never answers), 5xx, html. */
const verifier = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const form = new URLSearchParams(body);
    seen.push({ path: req.url ?? '', secret: form.get('secret'), response: form.get('response'), remoteip: form.get('remoteip') });
    const token = form.get('response') ?? '';
    if (token === 'slow') return; // the request hangs until Flagpost gives up
    if (token === '5xx') return res.writeHead(502, { 'content-type': 'application/json' }).end('{"success":true}');
    if (token === 'html') return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
    const success = token.startsWith('ok');
    const answer: Record<string, unknown> = { success, 'error-codes': success ? [] : ['invalid-input-response'] };
    if (req.url?.startsWith('/recaptcha') || req.url?.startsWith('/hcaptcha')) answer.score = token === 'ok-low' ? 0.2 : 0.9;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
});
await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}`;
after(() => {
  verifier.closeAllConnections();
  verifier.close();
});

const SECRET = 'captcha-secret-0123456789-never-shown';

forEachDialect(
  'CAPTCHA verification',
  (ctx) => {
    let forms: Record<'turnstile' | 'hcaptcha' | 'recaptcha', string>;
    const count = async (key: string) => (await ctx().admin('GET', `/admin/v1/forms/${key}/submissions`)).json().submissions.length as number;
    before(async () => {
      const make = async (provider: string, minScore?: number) =>
        (
          await createForm(ctx(), {
            name: provider,
            uploadsEnabled: true,
            captcha: { provider, secret: SECRET, ...(minScore === undefined ? {} : { minScore }) },
          })
        ).key;
      forms = { turnstile: await make('turnstile'), hcaptcha: await make('hcaptcha', 0.5), recaptcha: await make('recaptcha', 0.5) };
    });

    it('stores a submission whose token the provider confirms, without the token', async () => {
      const fields = { turnstile: 'cf-turnstile-response', hcaptcha: 'h-captcha-response', recaptcha: 'g-recaptcha-response' } as const;
      for (const provider of ['turnstile', 'hcaptcha', 'recaptcha'] as const) {
        seen.length = 0;
        const res = await submitJson(
          ctx(),
          forms[provider],
          { email: 'ada@example.com', [fields[provider]]: 'ok-token' },
          { headers: { 'x-forwarded-for': '1.2.3.4' } },
        );
        assert.equal(res.statusCode, 200, `${provider}: ${res.body}`);
        assert.deepEqual(seen, [{ path: `/${provider}`, secret: SECRET, response: 'ok-token', remoteip: '127.0.0.1' }]);
        const stored = (await ctx().admin('GET', `/admin/v1/forms/${forms[provider]}/submissions`)).json().submissions[0];
        assert.deepEqual(stored.data, { email: 'ada@example.com' }, 'the token is not data');
      }
      // The other encodings carry the token the same way.
      assert.equal((await submitUrlencoded(ctx(), forms.turnstile, 'email=b%40example.com&cf-turnstile-response=ok-2', { rest: true })).statusCode, 200);
      const multipart = await submitMultipart(ctx(), forms.turnstile, [
        { name: 'email', value: 'c@example.com' },
        { name: 'cf-turnstile-response', value: 'ok-3' },
        { name: 'file', filename: 'a.txt', content: 'x' },
      ]);
      assert.equal(multipart.statusCode, 200, multipart.body);
    });

    it('fails closed: missing token, refused token, low score, timeout, 5xx and non-JSON store nothing', async () => {
      const missing = 'Error: Please complete the CAPTCHA before submitting';
      const failed = 'Error: The CAPTCHA check failed, please try again';
      const unavailable = 'Error: The CAPTCHA could not be checked right now, please try again in a moment';
      const field = { turnstile: 'cf-turnstile-response', hcaptcha: 'h-captcha-response', recaptcha: 'g-recaptcha-response' } as const;
      const cases: Array<[keyof typeof forms, Record<string, unknown>, number, string]> = [];
      for (const provider of ['turnstile', 'hcaptcha', 'recaptcha'] as const) {
        const token = (value: string) => ({ [field[provider]]: value });
        cases.push(
          [provider, {}, 400, missing],
          [provider, token(''), 400, missing],
          [provider, token('bad'), 403, failed],
          [provider, token('slow'), 503, unavailable],
          [provider, token('5xx'), 503, unavailable],
          [provider, token('html'), 503, unavailable],
        );
        // A score under the form's minimum (hCaptcha and reCAPTCHA forms ask for 0.5; Turnstile has no score).
        if (provider !== 'turnstile') cases.push([provider, token('ok-low'), 403, failed]);
      }
      // Another provider's token field is no token.
      cases.push(['recaptcha', { 'cf-turnstile-response': 'ok' }, 400, missing]);
      for (const [provider, extra, status, message] of cases) {
        const before = await count(forms[provider]);
        const res = await submitJson(ctx(), forms[provider], { email: 'bot@example.com', ...extra });
        assert.equal(res.statusCode, status, `${provider} ${JSON.stringify(extra)}: ${res.body}`);
        assert.equal(res.json().message, message);
        assert.equal(await count(forms[provider]), before, 'nothing stored');
      }
      // Redirect mode: the built-in error page with the message.
      const redirected = await submitUrlencoded(ctx(), forms.turnstile, 'email=x%40example.com&cf-turnstile-response=bad');
      assert.equal(redirected.statusCode, 303);
      assert.match(String(redirected.headers.location), /\/v1\/s\/error\?message=Error%3A%20The%20CAPTCHA%20check%20failed/);
    });

    it('keeps the secret write-only: never in an admin answer or a log line', async () => {
      const answers = [
        await ctx().admin('GET', '/admin/v1/forms'),
        await ctx().admin('GET', `/admin/v1/forms/${forms.recaptcha}`),
        await ctx().admin('PATCH', `/admin/v1/forms/${forms.recaptcha}`, { name: 'Renamed' }),
      ];
      for (const res of answers) {
        assert.equal(res.statusCode, 200);
        assert.ok(!res.body.includes(SECRET), res.body);
      }
      assert.deepEqual(answers[1]!.json().captcha, { provider: 'recaptcha', minScore: 0.5 });
      assert.ok(logged.length > 0, 'the services logged something');
      assert.ok(!logged.join('\n').includes(SECRET));
      // Switched off with null; an unknown provider or a score out of range is a 400 that changes nothing.
      for (const captcha of [
        { provider: 'friendlycaptcha', secret: 'x' },
        { provider: 'turnstile', secret: '' },
        { provider: 'recaptcha', secret: 'x', minScore: 2 },
      ]) {
        const res = await ctx().admin('PATCH', `/admin/v1/forms/${forms.recaptcha}`, { captcha });
        assert.equal(res.statusCode, 400, JSON.stringify(captcha));
      }
      assert.deepEqual((await ctx().admin('GET', `/admin/v1/forms/${forms.recaptcha}`)).json().captcha, { provider: 'recaptcha', minScore: 0.5 });
      const off = await ctx().admin('PATCH', `/admin/v1/forms/${forms.recaptcha}`, { captcha: null });
      assert.equal(off.json().captcha, null);
      assert.equal((await submitJson(ctx(), forms.recaptcha, { email: 'free@example.com' })).statusCode, 200);
    });
  },
  {
    FLAGPOST_TURNSTILE_VERIFY_URL: `${base}/turnstile`,
    FLAGPOST_HCAPTCHA_VERIFY_URL: `${base}/hcaptcha`,
    FLAGPOST_RECAPTCHA_VERIFY_URL: `${base}/recaptcha`,
    FLAGPOST_CAPTCHA_TIMEOUT_MS: '300',
  },
  // Every line the services log, at every level, is kept and searched for the secret.
  {
    log: pino(
      { level: 'trace' },
      new Writable({
        write(chunk, _encoding, done) {
          logged.push(String(chunk));
          done();
        },
      }),
    ),
  },
);
