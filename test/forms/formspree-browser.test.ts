import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { build } from 'esbuild';
import type { BrowserContext } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createTestContext, type TestContext } from '../support/context.ts';
import { createForm, listSubmissions } from '../support/forms.ts';
import { freePort, ROOT } from '../support/process.ts';

// Issue 34: an existing @formspree/react contact form, and an @formspree/ajax one, become Flagpost forms
// by changing one option (`endpoint`, `origin`). Both run in headless Chromium on a page of another
// origin, bundled by esbuild from the pinned packages, as a site ships them.

const APP = `
import React from 'react';
import { createRoot } from 'react-dom/client';
import { useForm, ValidationError } from '@formspree/react';
const config = window.flagpost;

function Contact() {
  // The one option a site changes: where Formspree's library posts.
  const [state, handleSubmit] = useForm(config.formKey, { endpoint: config.endpoint });
  if (state.succeeded) return React.createElement('p', { id: 'thanks' }, 'Thanks for your message!');
  return React.createElement('form', { id: 'contact', onSubmit: handleSubmit },
    React.createElement('input', { id: 'email', type: 'text', name: 'email' }),
    React.createElement(ValidationError, { prefix: 'Email', field: 'email', errors: state.errors, id: 'email-error' }),
    React.createElement('textarea', { id: 'message', name: 'message' }),
    React.createElement('input', { id: 'cv', type: 'file', name: 'cv' }),
    React.createElement(ValidationError, { errors: state.errors, id: 'form-error' }),
    React.createElement('button', { id: 'send', type: 'submit', disabled: state.submitting }, 'Send'));
}
createRoot(document.getElementById('root')).render(React.createElement(Contact));
if (config.ajax) (await import('@formspree/ajax')).initForm({ formElement: '#ajax', formId: config.formKey, origin: config.endpoint });
`;

const PAGE = (config: string) => `<!doctype html><html><head><title>Contact</title></head><body>
<div id="root"></div>
<form id="ajax"><input type="text" name="email" data-fs-field><span id="ajax-email-error" data-fs-error="email"></span>
<div id="ajax-success" data-fs-success>Sent!</div><button id="ajax-send" type="submit" data-fs-submit-btn>Send</button></form>
<script>window.flagpost = ${config};</script><script type="module" src="/app.js"></script></body></html>`;

describe('Formspree client libraries in headless Chromium (issue 34)', { skip: chromiumMissing }, () => {
  let ctx: TestContext;
  let site: http.Server;
  let siteUrl: string;
  let browser: BrowserContext;
  let form: { key: string };

  before(async () => {
    const port = freePort();
    const flagpost = `http://127.0.0.1:${port}`;
    ctx = await createTestContext('sqlite');
    await ctx.app.listen({ port, host: '127.0.0.1' });
    const bundle = await build({
      stdin: { contents: APP, resolveDir: ROOT, loader: 'js' },
      bundle: true,
      format: 'esm',
      target: 'chrome120',
      // @formspree/ajax's package.json `browser` field names dist/global.js, a script-tag build that only sets
      // window.formspree and exports nothing; esbuild prefers `browser` for the browser platform, so
      // `initForm` was undefined ("(void 0) is not a function"). Its `module` entry is the ES module a site's
      // bundler imports; packages with an `exports` map (React) are unaffected by mainFields.
      mainFields: ['module', 'main'],
      define: { 'process.env.NODE_ENV': '"production"' },
      write: false,
      logLevel: 'silent',
    });
    const script = bundle.outputFiles[0]!.text;
    site = http.createServer((req, res) => {
      if (req.url === '/app.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(PAGE(JSON.stringify({ formKey: form.key, endpoint: `${flagpost}/formspree`, ajax: req.url === '/?ajax' })));
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}/`;
    form = await createForm(ctx, {
      uploadsEnabled: true,
      websites: [new URL(siteUrl).origin],
      fieldRules: { properties: { email: { type: 'string', format: 'email' } }, required: ['email'] },
      filePolicy: { allowedTypes: ['application/pdf'] },
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
    await ctx?.close();
  });

  it('shows the field error of a bad e-mail in the page, refuses an .exe renamed .pdf, then submits', { timeout: 60_000 }, async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(siteUrl);
    await page.fill('#email', 'not-an-email');
    await page.fill('#message', 'Hello');
    await page.click('#send');
    await page.waitForSelector('#email-error');
    assert.equal(await page.textContent('#email-error'), 'Email should be an email');

    await page.fill('#email', 'ada@example.com');
    const mz = Buffer.alloc(512);
    mz.write('MZ', 0, 'latin1');
    mz.writeUInt32LE(0x80, 0x3c);
    mz.write('PE\0\0', 0x80, 'latin1');
    await page.setInputFiles('#cv', { name: 'cv.pdf', mimeType: 'application/pdf', buffer: mz });
    await page.click('#send');
    await page.waitForSelector('#form-error');
    assert.equal(await page.textContent('#form-error'), 'Error: File "cv.pdf" is not an allowed type');

    await page.setInputFiles('#cv', { name: 'cv.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.7\n%%EOF\n') });
    await page.click('#send');
    await page.waitForSelector('#thanks');
    const { submissions } = await listSubmissions(ctx, form.key);
    assert.equal(submissions.length, 1);
    assert.deepEqual(submissions[0]!.data, { email: 'ada@example.com', message: 'Hello' });
    assert.deepEqual(
      submissions[0]!.files.map((f: { name: string }) => f.name),
      ['cv.pdf'],
    );
    const row = await ctx.handle.db.selectFrom('submissions').select('webdriver').where('id', '=', submissions[0]!.id).executeTakeFirstOrThrow();
    assert.equal(Number(row.webdriver), 1, "the library's session data told Flagpost it runs under automation");
    assert.deepEqual(errors, []);
  });

  it('works with @formspree/ajax given its origin option', { timeout: 60_000 }, async () => {
    const page = await browser.newPage();
    await page.goto(`${siteUrl}?ajax`);
    await page.fill('#ajax input[name=email]', 'nope');
    await page.click('#ajax-send');
    await page.waitForSelector('#ajax-email-error[data-fs-active]');
    assert.match((await page.textContent('#ajax-email-error')) ?? '', /should be an email/);
    await page.fill('#ajax input[name=email]', 'grace@example.com');
    await page.click('#ajax-send');
    await page.waitForSelector('#ajax-success[data-fs-active]');
    const { submissions } = await listSubmissions(ctx, form.key);
    assert.equal(submissions[0]!.data.email, 'grace@example.com');
  });
});
