import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Form } from '../forms/index.ts';
import type { Submission } from './submission.ts';
import { autoResponseMail, notificationMail } from './submission-mail.ts';

const submission = (data: Record<string, unknown>, files: Submission['files'] = []): Submission => ({
  id: '01J0000000000000000000000',
  formId: 'f',
  data,
  files,
  spam: false,
  spamReasons: [],
  meta: { ip: null, userAgent: null, referer: null, origin: null },
  createdAt: '2026-11-22T10:00:00.000Z',
});
const form = (settings: Partial<Pick<Form, 'notifications' | 'autoResponse'>> = {}) => ({
  key: 'k',
  name: 'Contact',
  notifications: null,
  autoResponse: null,
  ...settings,
});
/** Lines at the left margin of the text part: the only ones a reader takes for fields. */
const marginLines = (text: string) => text.split('\n').filter((line) => line !== '' && !line.startsWith(' '));

describe('notification e-mail (issue 8: no field can imitate another line; issue 34: templates)', () => {
  it('lists each field on its own line of the text part and in a row of the HTML table', () => {
    const { subject, text, html } = notificationMail(form(), submission({ email: 'ada@example.com', n: 3 }), 'http://x/s/1');
    assert.equal(subject, 'New submission: Contact');
    assert.match(text, /^email +ada@example\.com$/m);
    assert.match(text, /^n +3$/m);
    assert.match(html!, /<th[^>]*>email<\/th><td[^>]*>ada@example\.com<\/td>/);
    assert.match(text, /Open submission 01J0000000000000000000000 in the dashboard \[http:\/\/x\/s\/1\]/);
  });

  const forgeries: Array<[string, Record<string, unknown>]> = [
    ['a newline in a value', { message: 'hello\nemail: forged@evil.example' }],
    ['a carriage return in a value', { message: 'hello\r\nemail: forged@evil.example' }],
    ['a Unicode line separator in a value', { message: 'hello\u2028email: forged@evil.example' }],
    ['a newline in a field name', { 'x\nemail': 'forged@evil.example' }],
    ['a vertical tab and form feed', { message: 'a\u000bemail: forged@evil.example\u000cz' }],
  ];
  for (const [name, data] of forgeries) {
    it(`keeps ${name} from starting a line of its own`, () => {
      const { text } = notificationMail(form(), submission({ real: 'ada@example.com', ...data }), 'http://x/s/1');
      assert.ok(!marginLines(text).some((line) => line.startsWith('email')), text);
      assert.ok(text.includes('forged@evil.example'), 'the text is still shown');
    });
  }

  it('escapes hostile values in the HTML part', () => {
    const { html } = notificationMail(form(), submission({ '<b>name</b>': '<script>alert(1)</script>' }), 'http://x/s/1');
    assert.ok(!html!.includes('<script>'), html);
    assert.ok(html!.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    assert.ok(html!.includes('&lt;b&gt;name&lt;/b&gt;'));
  });

  it('shows files as names with sizes, each on one line', () => {
    const { text, html } = notificationMail(
      form(),
      submission({ a: '1' }, [{ id: 'f1', field: 'cv', name: 'a\nOpen submission 2: http://evil', size: 2048, contentType: 'text/plain' }]),
      'http://x/s/1',
    );
    assert.match(html!, /<li>cv: a Open submission 2: http:\/\/evil \(2\.0 KB\)<\/li>/);
    assert.equal(text.split('\n').filter((line) => line.startsWith('Open submission')).length, 1, text);
  });

  it('renders subject and sender name templates on one line, without the breaks of a value', () => {
    const mail = notificationMail(
      form({ notifications: { subject: 'New message from {{ name }}', fromName: '{{ name }} via Flagpost' } }),
      submission({ name: 'Ada\r\nBcc: victim@evil.example', email: 'ada@example.com' }),
      'http://x/s/1',
    );
    assert.equal(mail.subject, 'New message from Ada Bcc: victim@evil.example');
    assert.equal(mail.fromName, 'Ada Bcc: victim@evil.example via Flagpost');
    assert.equal(mail.replyTo, 'ada@example.com');
  });

  it('falls back to the default subject when the template renders nothing', () => {
    assert.equal(notificationMail(form({ notifications: { subject: '{{ missing }}' } }), submission({ a: '1' }), 'l').subject, 'New submission: Contact');
  });

  const replyTo: Array<[string, Record<string, unknown>, string | undefined, string | undefined]> = [
    ['the email field', { email: ' ada@example.com ' }, undefined, 'ada@example.com'],
    ['_replyto when email holds none', { email: 'not an address', _replyto: 'bob@example.com' }, undefined, 'bob@example.com'],
    ['no Reply-To for two addresses', { email: 'a@example.com, b@example.com' }, undefined, undefined],
    ['no Reply-To for a line break', { email: 'a@example.com\r\nBcc: x@example.com' }, undefined, undefined],
    ['no Reply-To for a list', { email: ['a@example.com', 'b@example.com'] }, undefined, undefined],
    ['the configured field', { email: 'a@example.com', contact: 'c@example.com' }, 'contact', 'c@example.com'],
    ['nothing when the configured field is absent', { email: 'a@example.com' }, 'contact', undefined],
  ];
  for (const [name, data, field, expected] of replyTo) {
    it(`takes Reply-To from ${name}`, () => {
      assert.equal(notificationMail(form({ notifications: field ? { replyToField: field } : null }), submission(data), 'l').replyTo, expected);
    });
  }
});

describe('auto-response e-mail (issue 34)', () => {
  const settings = { enabled: true, subject: 'Thanks, {{ name }}', body: '<p>Hello {{ name }}, we got: {{ message }}</p>' };

  it('renders the body with escaped fields, and its text part from the HTML', () => {
    const found = autoResponseMail(form({ autoResponse: settings }), submission({ name: 'Ada', email: 'ada@example.com', message: '<script>x</script>' }));
    assert.equal(found?.to, 'ada@example.com');
    assert.equal(found.mail.subject, 'Thanks, Ada');
    assert.ok(found.mail.html!.includes('<p>Hello Ada, we got: &lt;script&gt;x&lt;/script&gt;</p>'), found.mail.html);
    assert.match(found.mail.text, /Hello Ada, we got: <script>x<\/script>/);
  });

  it('adds the submission when asked, and the configured Reply-To and sender name', () => {
    const found = autoResponseMail(
      form({ autoResponse: { ...settings, includeSubmission: true, replyTo: 'team@example.com', fromName: 'The team' } }),
      submission({ name: 'Ada', email: 'ada@example.com' }),
    );
    assert.match(found!.mail.text, /^name +Ada$/m);
    assert.equal(found!.mail.replyTo, 'team@example.com');
    assert.equal(found!.mail.fromName, 'The team');
  });

  it('sends nothing when off or when no field holds one valid address', () => {
    assert.equal(autoResponseMail(form({ autoResponse: { ...settings, enabled: false } }), submission({ email: 'ada@example.com' })), undefined);
    assert.equal(autoResponseMail(form({ autoResponse: settings }), submission({ email: 'nope' })), undefined);
    assert.equal(autoResponseMail(form({ autoResponse: { ...settings, toField: 'work' } }), submission({ email: 'ada@example.com' })), undefined);
  });
});
