import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createForm, listSubmissions, submitJson, submitMultipart, submitUrlencoded } from '../support/forms.ts';

const RULES = {
  type: 'object',
  properties: {
    email: { type: 'string', format: 'email' },
    name: { type: 'string', minLength: 2, maxLength: 40 },
    age: { type: 'integer', minimum: 18, maximum: 120 },
    topic: { type: 'string', enum: ['sales', 'support'] },
    code: { type: 'string', pattern: '^[A-Z]{3}-\\d{4}$' },
    site: { type: 'string', format: 'uri' },
    day: { type: 'string', format: 'date' },
  },
  required: ['email', 'name'],
  additionalProperties: false,
};

forEachDialect('form field rules (issue 34)', (ctx) => {
  let form: { key: string };
  before(async () => {
    form = await createForm(ctx(), { fieldRules: RULES, uploadsEnabled: true });
  });

  it('stores a submission that keeps every rule, and shows the rules in the form', async () => {
    const res = await submitJson(ctx(), form.key, { email: 'ada@example.com', name: 'Ada', age: '36', topic: 'sales', code: 'ABC-1234', day: '2026-11-27' });
    assert.equal(res.statusCode, 200, res.body);
    const shown = await ctx().admin('GET', `/admin/v1/forms/${form.key}`);
    assert.deepEqual(shown.json().fieldRules, RULES);
    const { submissions } = await listSubmissions(ctx(), form.key);
    assert.equal(submissions[0]!.data.age, '36', 'the data is stored as sent, not as coerced for the check');
  });

  it('answers 422 with one entry per field, in Formspree codes and its own, and stores nothing', async () => {
    const before = (await listSubmissions(ctx(), form.key)).submissions.length;
    const res = await submitJson(ctx(), form.key, {
      email: 'not-an-email',
      name: '',
      age: 'twelve',
      topic: 'other',
      code: 'abc-12',
      site: 'no url',
      day: '27.11.2026',
      extra: 'x',
    });
    assert.equal(res.statusCode, 422, res.body);
    const body = res.json();
    assert.equal(body.error, true);
    assert.equal(body.code, 422);
    assert.match(body.message, /^Error: Some fields are not valid: /);
    const byField = Object.fromEntries(body.errors.map((e: { field: string; code: string; message: string }) => [e.field, [e.code, e.message]]));
    assert.deepEqual(byField, {
      email: ['TYPE_EMAIL', 'should be an email'],
      name: ['REQUIRED_FIELD_EMPTY', 'is required and cannot be empty'],
      age: ['TYPE_NUMERIC', 'should be a number'],
      topic: ['NOT_ALLOWED_VALUE', 'is not one of the allowed values'],
      code: ['PATTERN_MISMATCH', 'does not have the expected format'],
      site: ['TYPE_URL', 'should be a URL'],
      day: ['TYPE_DATE', 'should be a date (YYYY-MM-DD)'],
      extra: ['UNKNOWN_FIELD', 'is not a field of this form'],
    });
    assert.equal((await listSubmissions(ctx(), form.key)).submissions.length, before);
  });

  it('tells a missing required field from an empty one, and checks lengths and bounds', async () => {
    const res = await submitJson(ctx(), form.key, { name: 'A', age: 12 });
    assert.equal(res.statusCode, 422);
    const byField = Object.fromEntries(res.json().errors.map((e: { field: string; code: string; message: string }) => [e.field, [e.code, e.message]]));
    assert.deepEqual(byField, {
      email: ['REQUIRED_FIELD_MISSING', 'is required'],
      name: ['TOO_SHORT', 'should be at least 2 characters long'],
      age: ['TOO_SMALL', 'should be at least 18'],
    });
    const big = await submitJson(ctx(), form.key, { email: 'a@b.co', name: 'x'.repeat(41), age: 500 });
    assert.deepEqual(
      big.json().errors.map((e: { code: string }) => e.code),
      ['TOO_LONG', 'TOO_LARGE'],
    );
  });

  it('gives TYPE_TEXT for a list where one text is expected', async () => {
    const res = await submitUrlencoded(ctx(), form.key, 'email=a%40b.co&name=Ada&name=Bob', { rest: true });
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(res.json().errors, [{ field: 'name', code: 'TYPE_TEXT', message: 'should be text' }]);
  });

  it('sends an HTML form to the error page with the message', async () => {
    const res = await submitUrlencoded(ctx(), form.key, 'email=bad&name=Ada');
    assert.equal(res.statusCode, 303);
    const location = new URL(String(res.headers.location));
    assert.equal(location.pathname, '/v1/s/error');
    assert.equal(location.searchParams.get('message'), 'Error: Some fields are not valid: email');
  });

  it('counts a file field as present, and checks multipart text fields the same way', async () => {
    const strict = await createForm(ctx(), {
      uploadsEnabled: true,
      fieldRules: { properties: { email: { type: 'string', format: 'email' } }, required: ['email', 'cv'], additionalProperties: false },
    });
    const ok = await submitMultipart(ctx(), strict.key, [
      { name: 'email', value: 'ada@example.com' },
      { name: 'cv', filename: 'cv.txt', content: 'hello', contentType: 'text/plain' },
    ]);
    assert.equal(ok.statusCode, 200, ok.body);
    const bad = await submitMultipart(ctx(), strict.key, [{ name: 'email', value: 'nope' }]);
    assert.equal(bad.statusCode, 422);
    assert.deepEqual(
      bad.json().errors.map((e: { field: string; code: string }) => [e.field, e.code]),
      [
        ['cv', 'REQUIRED_FIELD_MISSING'],
        ['email', 'TYPE_EMAIL'],
      ],
    );
  });

  it('leaves the honeypot out of the rules: a filled one is spam, not an unknown field', async () => {
    const res = await submitJson(ctx(), form.key, { email: 'ada@example.com', name: 'Ada', _trap: 'bot' });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('refuses rules outside the subset, and patterns that are not linear-time RE2, when they are saved', async () => {
    for (const fieldRules of [
      { properties: { a: { type: 'array' } } },
      { properties: { a: { oneOf: [] } } },
      { $ref: '#/x' },
      { properties: { a: { pattern: '(a+)+\\1' } } },
      { properties: { a: { pattern: '(?=x)' } } },
      { properties: { a: { minLength: 5, maxLength: 2 } } },
    ]) {
      const res = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { fieldRules });
      assert.equal(res.statusCode, 400, `${JSON.stringify(fieldRules)}: ${res.body}`);
    }
    const shown = await ctx().admin('GET', `/admin/v1/forms/${form.key}`);
    assert.deepEqual(shown.json().fieldRules, RULES, 'a refused PATCH changes nothing');
  });

  it('matches a pattern in linear time: a catastrophic pattern for backtracking engines answers at once', async () => {
    const slow = await createForm(ctx(), { fieldRules: { properties: { a: { type: 'string', pattern: '^(a+)+$' } } } });
    const res = await submitJson(ctx(), slow.key, { a: `${'a'.repeat(5000)}!` });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().errors[0].code, 'PATTERN_MISMATCH');
  });

  it('clears the rules with null', async () => {
    const cleared = await createForm(ctx(), { fieldRules: { required: ['x'] } });
    assert.equal((await submitJson(ctx(), cleared.key, { y: 1 })).statusCode, 422);
    const res = await ctx().admin('PATCH', `/admin/v1/forms/${cleared.key}`, { fieldRules: null });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().fieldRules, null);
    assert.equal((await submitJson(ctx(), cleared.key, { y: 1 })).statusCode, 200);
  });
});
