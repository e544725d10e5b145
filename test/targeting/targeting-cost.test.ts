import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { MAX_CONDITIONS, MAX_FLAG_OPERANDS, MAX_LOGIC_COST, MAX_REGEX_STATES, MAX_RULES, MAX_VALUES } from '../../src/targeting/limits.ts';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

// Targeting that would pin the event loop (issue 29, item 3): JSON Logic whose iterators multiply,
// and typed rules full of slow regular expressions. Both are refused when stored through the admin
// API; logic stored before the limits (written here straight into the table) answers GENERAL at once
// instead of running.

const lit = (n: number) => Array.from({ length: n }, (_, i) => i);
/** Nested iterators over literal arrays: n^depth bodies, in a few hundred characters. */
function nested(n: number, depth: number): unknown {
  let body: unknown = { '==': [{ var: '' }, -1] };
  for (let k = 0; k < depth; k++) body = { some: [lit(n), body] };
  return { if: [body, 'on', 'off'] };
}
/** The reviewer's shape: the innermost body reads the context, so nothing can be computed ahead. */
function nestedReadingContext(n: number, depth: number): unknown {
  let body: unknown = { '==': [{ var: `${'../'.repeat(depth * 2)}country` }, 'nowhere'] };
  for (let k = 0; k < depth; k++) body = { some: [lit(n), body] };
  return { if: [body, 'on', 'off'] };
}
/** A pattern whose states all stay alive on `aaaa…`, the slowest case of re2js. */
const slowPattern = (i: number) => `[^x]{${30 + (i % 7)}}$`;
/** Rules of `in` conditions of MAX_VALUES values each: past MAX_FLAG_OPERANDS together from the third on. */
const listRules = (n: number) =>
  Array.from({ length: n }, (_, r) => ({
    id: `r${r}`,
    name: '',
    enabled: true,
    conditions: [{ attribute: 'plan', operator: 'in', values: Array.from({ length: MAX_VALUES }, (_, i) => `p${r}-${i}`) }],
    segments: [],
    serve: { variant: 'on' },
  }));
const tooManyLists = Math.floor(MAX_FLAG_OPERANDS / MAX_VALUES) + 1;

forEachDialect('targeting cost bounds (issue 29)', (ctx) => {
  let project: ProjectFixture;
  const envKey = () => project.environments[0]!.key;
  const flagUrl = (slug: string) => `/admin/v1/projects/${project.key}/environments/${envKey()}/flags/${slug}`;
  const evaluate = async (slug: string, context: Record<string, unknown>) => {
    const res = await ctx().app.inject({
      method: 'POST',
      url: `/ofrep/v1/evaluate/flags/${slug}`,
      headers: { 'content-type': 'application/json', ...keys(project) },
      payload: JSON.stringify({ context }),
    });
    return { status: res.statusCode, body: res.json() as { key?: string; value?: unknown; reason?: string; errorCode?: string; errorDetails?: string } };
  };

  before(async () => {
    project = await createProject(ctx());
    for (const slug of ['logic', 'regex', 'stored', 'lists', 'stored-lists']) {
      await createFlag(ctx(), project.key, { slug, type: 'string', variants: { on: 'on', off: 'off' }, defaultVariant: 'off' });
      const res = await ctx().admin('PATCH', flagUrl(slug), { state: 'ENABLED', jsonLogic: { if: [{ '==': [{ var: 'country' }, 'fr'] }, 'on', 'off'] } });
      assert.equal(res.statusCode, 200, res.body);
    }
    // As a row written before the limits existed: nothing has read the environment yet.
    const env = await ctx().handle.db.selectFrom('environments').select('id').where('key', '=', envKey()).executeTakeFirstOrThrow();
    await ctx()
      .handle.db.updateTable('flags')
      .set({ json_logic: JSON.stringify(nestedReadingContext(60, 3)) })
      .where('environment_id', '=', env.id)
      .where('slug', '=', 'stored')
      .execute();
    await ctx()
      .handle.db.updateTable('flags')
      .set({ json_logic: null, rules: JSON.stringify(listRules(tooManyLists)) })
      .where('environment_id', '=', env.id)
      .where('slug', '=', 'stored-lists')
      .execute();
  });

  it('refuses JSON Logic whose nested iterators multiply past the bound, naming the field, and keeps the old targeting', async () => {
    for (const logic of [nested(40, 3), nestedReadingContext(40, 3)]) {
      const res = await ctx().admin('PATCH', flagUrl('logic'), { jsonLogic: logic });
      assert.equal(res.statusCode, 400, res.body);
      const body = res.json() as { error: boolean; details: Array<{ field: string; reason: string }> };
      assert.equal(body.error, true);
      assert.ok(
        body.details.some((d) => d.field.startsWith('body.jsonLogic')),
        res.body,
      );
    }
    const answer = await evaluate('logic', { country: 'fr' });
    assert.equal(answer.body.value, 'on', 'the stored targeting is unchanged');
  });

  it('names why: the operations past the bound, an iterator over a computed array, ../ in a path, an accumulator that doubles', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [nested(40, 3), new RegExp(`more than ${MAX_LOGIC_COST}`)],
      [{ some: [{ map: [{ var: 'a' }, { var: '' }] }, true] }, /iterates over a var or a literal array/],
      [{ some: [{ var: 'a' }, { '==': [{ var: '../b' }, 1] }] }, /\.\.\//],
      [{ reduce: [lit(40), { merge: [{ var: 'accumulator' }, { var: 'accumulator' }] }, [1]] }, /accumulator of reduce/],
    ];
    for (const [logic, reason] of cases) {
      const res = await ctx().admin('PATCH', flagUrl('logic'), { jsonLogic: logic });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.body, reason);
    }
  });

  it('accepts iterators over context values and small literal arrays, and evaluates them as flagd does', async () => {
    const logic = { if: [{ some: [{ var: 'groups' }, { in: [{ var: '' }, ['beta', 'staff']] }] }, 'on', 'off'] };
    const res = await ctx().admin('PATCH', flagUrl('logic'), { jsonLogic: logic });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await evaluate('logic', { groups: ['x', 'staff'] })).body.value, 'on');
    assert.equal((await evaluate('logic', { groups: ['x'] })).body.value, 'off');
  });

  it(`refuses ${MAX_RULES} rules of ${MAX_CONDITIONS} slow matches conditions, and a flag past ${MAX_REGEX_STATES} regex states`, async () => {
    const rules = Array.from({ length: MAX_RULES }, (_, r) => ({
      id: `r${r}`,
      conditions: Array.from({ length: MAX_CONDITIONS }, (_, c) => ({ attribute: 'text', operator: 'matches', values: [`${slowPattern(c)}|r${r}`] })),
      serve: { variant: 'on' },
    }));
    let res = await ctx().admin('PATCH', flagUrl('regex'), { jsonLogic: null, rules });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.body, /regular expressions have \d+ states/);
    res = await ctx().admin('PATCH', flagUrl('regex'), {
      jsonLogic: null,
      rules: [
        { id: 'a', conditions: [{ attribute: 'email', operator: 'matches', values: ['^[a-z]+@corp\\.com$'] }], serve: { variant: 'on' } },
        { id: 'b', conditions: [{ attribute: 'text', operator: 'matches', values: ['[^x]{20}$'] }], serve: { variant: 'on' } },
      ],
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.body, /body\.rules/);
    res = await ctx().admin('PATCH', flagUrl('regex'), {
      jsonLogic: null,
      rules: [{ id: 'a', conditions: [{ attribute: 'email', operator: 'matches', values: ['^[a-z]+@corp\\.com$'] }], serve: { variant: 'on' } }],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await evaluate('regex', { email: 'ann@corp.com' })).body.value, 'on');
  });

  it(`refuses rules whose conditions hold more than ${MAX_FLAG_OPERANDS} operands together, naming the limit, and keeps the old rules`, async () => {
    let res = await ctx().admin('PATCH', flagUrl('lists'), { jsonLogic: null, rules: listRules(tooManyLists) });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.body, new RegExp(`operands together, more than ${MAX_FLAG_OPERANDS}`));
    assert.match(res.body, /body\.rules/);
    assert.equal((await evaluate('lists', { country: 'fr' })).body.value, 'on', 'the stored targeting is unchanged');
    res = await ctx().admin('PATCH', flagUrl('lists'), { jsonLogic: null, rules: listRules(tooManyLists - 1) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await evaluate('lists', { plan: 'p1-999' })).body.value, 'on');
  });

  it('answers GENERAL without compiling for rules stored past the operand limit', async () => {
    const answer = await evaluate('stored-lists', { plan: 'p0-1' });
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.errorCode, 'GENERAL');
    assert.match(answer.body.errorDetails ?? '', new RegExp(`more than ${MAX_FLAG_OPERANDS}`));
  });

  it('answers GENERAL at once for targeting stored before the limits, and keeps answering other flags', async () => {
    const answer = await evaluate('stored', { country: 'fr' });
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.key, 'stored');
    assert.equal(answer.body.errorCode, 'GENERAL');
    assert.match(answer.body.errorDetails ?? '', /cost bound|more operations/);
    assert.equal((await evaluate('logic', { groups: ['staff'] })).body.value, 'on');
    const bulk = await ctx().app.inject({
      method: 'POST',
      url: '/ofrep/v1/evaluate/flags',
      headers: { 'content-type': 'application/json', ...keys(project) },
      payload: JSON.stringify({ context: { country: 'fr' } }),
    });
    assert.equal(bulk.statusCode, 200, bulk.body);
    const entry = (bulk.json() as { flags: Array<{ key: string; errorCode?: string }> }).flags.find((f) => f.key === 'stored');
    assert.ok(entry === undefined || entry.errorCode === 'GENERAL', bulk.body);
  });
});
