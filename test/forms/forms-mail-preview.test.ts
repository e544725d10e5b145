import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createForm } from '../support/forms.ts';

// Issue 34, dashboard: the form's screen previews the notification and the auto-response. The preview is
// rendered by the server with the templates and mail code that deliveries use, saved or unsaved settings.

forEachDialect('form mail preview (issue 34)', (ctx) => {
  it('renders both e-mails of a sample submission with the saved settings: subject, sender, Reply-To, recipients, escaped HTML and text', async () => {
    const form = await createForm(ctx(), {
      name: 'Contact',
      notifyEmails: ['ops@example.com'],
      notifications: {
        subject: 'New message from {{ name }}',
        fromName: '{{ name }} via Flagpost',
        cc: ['cc@example.com'],
        routes: [
          { emails: ['sales@example.com'], conditions: [{ attribute: 'topic', operator: 'equals', values: ['sales'] }] },
          { emails: ['help@example.com'], conditions: [{ attribute: 'topic', operator: 'equals', values: ['support'] }] },
        ],
      },
      autoResponse: { enabled: true, subject: 'Thanks, {{ name }}', body: '<p>Hi {{ name }}, we read every message.</p>', replyTo: 'team@example.com' },
    });
    const res = await ctx().admin('POST', `/admin/v1/forms/${form.key}/mail-preview`, {
      data: { name: 'Ada', email: 'ada@example.com', topic: 'sales', message: '<script>alert(1)</script>' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const { notification, autoResponse } = res.json();
    assert.equal(notification.subject, 'New message from Ada');
    assert.equal(notification.fromName, 'Ada via Flagpost');
    assert.equal(notification.replyTo, 'ada@example.com');
    assert.deepEqual(notification.to, ['ops@example.com', 'sales@example.com'], 'notifyEmails and the routes whose conditions hold');
    assert.deepEqual(notification.cc, ['cc@example.com']);
    assert.ok(notification.html.includes('&lt;script&gt;alert(1)&lt;/script&gt;') && !notification.html.includes('<script>'), notification.html);
    assert.match(notification.html, new RegExp(`/forms/${form.key}/submissions/preview_`));
    assert.match(notification.text, /^message +<script>alert\(1\)<\/script>$/m);
    assert.equal(autoResponse.to, 'ada@example.com');
    assert.equal(autoResponse.subject, 'Thanks, Ada');
    assert.equal(autoResponse.replyTo, 'team@example.com');
    assert.match(autoResponse.html, /<p>Hi Ada, we read every message.<\/p>/);
    assert.match(autoResponse.text, /Hi Ada, we read every message\./);
    const list = (await ctx().admin('GET', `/admin/v1/forms/${form.key}/submissions`)).json();
    assert.equal(list.submissions.length, 0, 'nothing is stored');
  });

  it('renders unsaved settings in place of the saved ones, and a sample with a name, an address and a message by default', async () => {
    const form = await createForm(ctx(), { notifications: { subject: 'Saved subject' } });
    const res = await ctx().admin('POST', `/admin/v1/forms/${form.key}/mail-preview`, {
      notifications: { subject: 'Draft: {{ name }}' },
      autoResponse: { enabled: true, subject: 'We got it', body: '<p>{{ message }}</p>', includeSubmission: true },
    });
    assert.equal(res.statusCode, 200, res.body);
    const { notification, autoResponse } = res.json();
    assert.equal(notification.subject, 'Draft: Ada Lovelace');
    assert.equal(notification.replyTo, 'ada@example.com');
    assert.deepEqual(notification.to, []);
    assert.equal(autoResponse.to, 'ada@example.com');
    assert.match(autoResponse.html, /<th[^>]*>email<\/th>/, 'includeSubmission adds the table');
    const saved = (await ctx().admin('GET', `/admin/v1/forms/${form.key}`)).json();
    assert.deepEqual([saved.notifications, saved.autoResponse], [{ subject: 'Saved subject' }, null], 'a preview saves nothing');
  });

  it('answers a null auto-response when it is off or the fields hold no single address, and the fallback subject without a template', async () => {
    const form = await createForm(ctx(), { name: 'Plain', autoResponse: { enabled: false, subject: 'x', body: 'y' } });
    const off = (await ctx().admin('POST', `/admin/v1/forms/${form.key}/mail-preview`, {})).json();
    assert.equal(off.autoResponse, null);
    assert.equal(off.notification.subject, 'New submission: Plain');
    const noAddress = await ctx().admin('POST', `/admin/v1/forms/${form.key}/mail-preview`, {
      data: { name: 'Bo', email: 'not an address' },
      autoResponse: { enabled: true, subject: 'x', body: 'y' },
    });
    assert.equal(noAddress.json().autoResponse, null);
    assert.equal(noAddress.json().notification.replyTo, undefined);
  });

  it('refuses a template that does not parse and an unknown form, as PATCH would', async () => {
    const form = await createForm(ctx(), {});
    const bad = await ctx().admin('POST', `/admin/v1/forms/${form.key}/mail-preview`, { notifications: { subject: 'Hi {{ name' }, autoResponse: null });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.ok(
      (bad.json().details as Array<{ field: string }>).some((d) => d.field === 'body.notifications.subject'),
      bad.body,
    );
    const shape = await ctx().admin('POST', `/admin/v1/forms/${form.key}/mail-preview`, { data: 'nope' });
    assert.equal(shape.statusCode, 400);
    assert.equal((await ctx().admin('POST', '/admin/v1/forms/nope/mail-preview', {})).statusCode, 404);
  });
});
