import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { notificationEmail, type Submission } from './submission.ts';

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
const form = { key: 'k', name: 'Contact' };
/** Lines at the left margin: the only ones a reader takes for fields. */
const marginLines = (text: string) => text.split('\n').filter((line) => line !== '' && !line.startsWith(' '));

describe('notification e-mail (issue 8: no field can imitate another line)', () => {
  it('lists each field on its own line', () => {
    const { subject, text } = notificationEmail(form, submission({ email: 'ada@example.com', n: 3 }), 'http://x/s/1');
    assert.equal(subject, 'New submission: Contact');
    assert.deepEqual(marginLines(text).slice(1, 3), ['email: ada@example.com', 'n: 3']);
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
      const { text } = notificationEmail(form, submission({ real: 'ada@example.com', ...data }), 'http://x/s/1');
      assert.ok(!marginLines(text).some((line) => line.startsWith('email:')), text);
      assert.ok(text.includes('forged@evil.example'), 'the text is still shown');
    });
  }

  it('keeps a multi-line message readable, indented under its field', () => {
    const { text } = notificationEmail(form, submission({ message: 'line one\nline two' }), 'http://x/s/1');
    assert.ok(text.includes('message: line one\n    line two'), text);
  });

  it('puts file names on one line', () => {
    const { text } = notificationEmail(
      form,
      submission({ a: '1' }, [{ id: 'f1', field: 'cv', name: 'a\nSubmission 1: http://evil', size: 3, contentType: 'text/plain' }]),
      'http://x/s/1',
    );
    assert.equal(text.split('\n').filter((line) => line.startsWith('Submission ')).length, 1, text);
  });
});
