import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createTestContext, dialects, type TestContext } from '../support/context.ts';
import { createForm, listSubmissions } from '../support/forms.ts';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A plain HTML page on its own loopback port whose form posts to Flagpost (another origin). */
async function startSitePage(action: string) {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Contact us</title></head><body>
<form action="${action}" method="post" enctype="multipart/form-data">
  <input name="name" required>
  <textarea name="message"></textarea>
  <input type="file" name="attachment">
  <input type="text" name="_trap" tabindex="-1" autocomplete="off" style="display:none">
  <button type="submit">Send</button>
</form></body></html>`;
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}/contact`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

for (const dialect of dialects()) {
  describe(`end to end: an HTML form in headless Chromium [${dialect}]`, { skip: chromiumMissing }, () => {
    let ctx: TestContext;
    let port: number;
    before(async () => {
      port = await freePort();
      ctx = await createTestContext(dialect, { FLAGPOST_PUBLIC_URL: `http://127.0.0.1:${port}` });
      await ctx.app.listen({ port, host: '127.0.0.1' });
    });
    after(async () => {
      await ctx?.close();
    });

    it('submits a form with a file, lands on the success page, and the admin API lists the submission', { timeout: 90_000 }, async () => {
      const form = await createForm(ctx, { name: 'Contact', uploadsEnabled: true });
      const site = await startSitePage(`http://127.0.0.1:${port}/v1/s/${form.key}`);
      // The form belongs to that website: its page is then where "Go back" leads.
      const patched = await ctx.admin('PATCH', `/admin/v1/forms/${form.key}`, { websites: [new URL(site.url).origin] });
      assert.equal(patched.statusCode, 200, patched.body);
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(site.url);
        await page.fill('input[name=name]', 'Ada Lovelace');
        await page.fill('textarea[name=message]', 'Hello from a browser & friends');
        await page.setInputFiles('input[name=attachment]', { name: 'notes', mimeType: 'text/plain', buffer: Buffer.from('analytical engine') });
        await Promise.all([page.waitForURL(/\/v1\/s\/success\?/), page.click('button[type=submit]')]);
        assert.equal(await page.textContent('#message'), 'Your form has been submitted successfully!');
        const back = await page.getAttribute('a', 'href');
        assert.ok(back?.startsWith('http://127.0.0.1:'), `go back link ${back}`);
        const { submissions } = await listSubmissions(ctx, form.key);
        assert.equal(submissions.length, 1);
        const [s] = submissions;
        assert.deepEqual(s!.data, { name: 'Ada Lovelace', message: 'Hello from a browser & friends' });
        assert.equal(s!.spam, false);
        assert.deepEqual(
          s!.files.map((f: Record<string, unknown>) => [f.field, f.name, f.size, f.contentType]),
          [['attachment', 'notes', 17, 'text/plain']],
        );
        const file = await ctx.admin('GET', `/admin/v1/forms/${form.key}/submissions/${s!.id}/files/${s!.files[0].id}`);
        assert.equal(file.body, 'analytical engine');
      } finally {
        await browser.close();
        await site.close();
      }
    });
  });
}
