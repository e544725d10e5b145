import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildIndex } from './compile.ts';
import { cidrsOf, flagOperands, logicCost, logicCostProblem, operandsProblem, regexStatesOf } from './cost.ts';
import { compileEnvironment } from './engine.ts';
import { MAX_CONDITIONS, MAX_CONTEXT_ENTRIES, MAX_FLAG_OPERANDS, MAX_LOGIC_COST, MAX_RULES, MAX_VALUES } from './limits.ts';
import type { Condition, Rule, Segment, TargetedFlag } from './targeting.ts';
import { regexStates } from './regex.ts';

// The static cost bound of JSON Logic and of the conditions Flagpost evaluates itself (issue 29).
// Each row names the rule; the figures are the model's (docs/adr/0024), not timings.

const lit = (n: number) => Array.from({ length: n }, (_, i) => i);
const nest = (n: number, depth: number): unknown => (depth === 0 ? { '==': [{ var: '' }, -1] } : { some: [lit(n), nest(n, depth - 1)] });
const costOf = (logic: unknown) => {
  const r = logicCost(logic);
  assert.ok(!('message' in r), JSON.stringify(r));
  return r.cost;
};

describe('logicCost', () => {
  it('counts one per operator outside iterators, whatever the context holds', () => {
    assert.equal(costOf({ if: [{ '==': [{ var: 'a' }, 1] }, 'on', 'off'] }), 3);
  });
  it('multiplies nested iterators over literal arrays: n^k bodies', () => {
    assert.ok(costOf(nest(10, 3)) >= 10 ** 3);
    assert.ok(costOf(nest(40, 3)) > MAX_LOGIC_COST);
    assert.ok(logicCostProblem(nest(40, 3))?.message.includes(`more than ${MAX_LOGIC_COST}`));
    assert.equal(logicCostProblem(nest(10, 3)), undefined);
  });
  it('bounds an iterator over a context value by the context limit', () => {
    const cost = costOf({ some: [{ var: 'groups' }, { in: [{ var: '' }, ['a', 'b']] }] });
    assert.ok(cost >= MAX_CONTEXT_ENTRIES && cost <= MAX_LOGIC_COST, String(cost));
  });
  it('charges nested iterators over parts of one context value once over the whole run, not per outer entry', () => {
    const cost = costOf({ some: [{ var: 'users' }, { some: [{ var: 'roles' }, { '==': [{ var: '' }, 'admin'] }] }] });
    assert.ok(cost < 10 * MAX_CONTEXT_ENTRIES, String(cost));
  });
  it('refuses an iterator over a computed array', () => {
    assert.match(JSON.stringify(logicCost({ map: [{ merge: [lit(10), lit(10)] }, 1] })), /iterates over a var or a literal array/);
  });
  it('refuses ../ and computed var paths', () => {
    assert.match(JSON.stringify(logicCost({ some: [{ var: 'a' }, { var: '../b' }] })), /\.\.\//);
    assert.match(JSON.stringify(logicCost({ var: { cat: ['a', 'b'] } })), /a var path is a string/);
  });
  it('refuses an accumulator read twice (it may double at each step), accepts one that grows by addition', () => {
    assert.match(JSON.stringify(logicCost({ reduce: [lit(30), { merge: [{ var: 'accumulator' }, { var: 'accumulator' }] }, [1]] })), /accumulator of reduce/);
    assert.match(JSON.stringify(logicCost({ reduce: [lit(30), { cat: [{ var: 'accumulator' }, { var: 'accumulator' }] }, 'x'] })), /accumulator of reduce/);
    assert.ok(costOf({ reduce: [lit(10), { merge: [{ var: 'accumulator' }, [{ var: 'current' }]] }, []] }) < MAX_LOGIC_COST);
    assert.ok(costOf({ reduce: [{ var: 'n' }, { '+': [{ var: 'current' }, { var: 'accumulator' }] }, 0] }) < MAX_LOGIC_COST);
  });
  it('refuses iterators nested deeper than the limit', () => {
    assert.match(JSON.stringify(logicCost(nest(1, 4))), /nest at most/);
  });
});

describe('regexStates and per-flag work', () => {
  const rows: Array<[string, number]> = [
    ['abc', 3],
    ['a{100}', 200],
    ['(?:ab){3}', 12],
    ['[^x]{20}$', 41],
    ['^[a-z]+@corp\\.com$', 13],
  ];
  for (const [pattern, states] of rows) it(`counts ${pattern} as ${states} states`, () => assert.equal(regexStates(pattern), states));
  it('adds up distinct patterns and CIDRs once each', () => {
    const m = (v: string) => ({ attribute: 'a', operator: 'matches' as const, values: [v] });
    assert.equal(regexStatesOf([m('abc'), m('abc'), m('de')]), 5);
    const c = { attribute: 'ip', operator: 'inCidr' as const, values: ['10.0.0.0/8', '::1/128'] };
    assert.equal(cidrsOf([c, c, { ...c, attribute: 'other' }]), 4);
  });
});

describe('flagOperands (compile cost)', () => {
  const inList = (n: number, tag: string): Condition => ({ attribute: 'plan', operator: 'in', values: Array.from({ length: n }, (_, i) => `${tag}-${i}`) });
  const rule = (id: string, conditions: Condition[], segments: string[] = [], enabled = true): Rule => ({
    id,
    name: '',
    enabled,
    conditions,
    segments,
    serve: { variant: 'on' },
  });
  const flag = (key: string, targeting: Partial<TargetedFlag['targeting']>): TargetedFlag => ({
    key,
    type: 'string',
    targeting: { state: 'ENABLED', variants: { on: 'on', off: 'off' }, defaultVariant: 'off', prerequisites: [], rules: [], ...targeting },
  });
  const segment: Segment = { key: 'big', name: '', description: '', match: 'any', conditions: [inList(300, 's')] };

  it('counts values, at least one per condition, segments and prerequisites at each use', () => {
    const exists: Condition = { attribute: 'a', operator: 'exists', values: [] };
    const pre = flag('pre', { rules: [rule('p', [inList(10, 'p')])] });
    const f = flag('f', {
      rules: [rule('a', [inList(100, 'a'), exists], ['big', 'big']), rule('b', [inList(50, 'b')], [], false)],
      prerequisites: [{ flag: 'pre', variants: ['on'] }],
    });
    const env = buildIndex([f, pre], [segment]);
    assert.equal(flagOperands(f, env), 100 + 1 + 600 + 10);
    assert.equal(flagOperands(f, env, true), 100 + 1 + 600 + 10 + 50);
  });
  it('counts JSON Logic operations and its $ref segments, not literal values', () => {
    const f = flag('j', { jsonLogic: { if: [{ or: [{ $ref: 'big' }, { in: [{ var: 'plan' }, ['a', 'b']] }] }, 'on', 'off'] } });
    assert.equal(flagOperands(f, buildIndex([f], [segment])), 300 + 4);
  });
  it('counts prerequisites reached by many paths without walking every path', () => {
    // Six layers of ten flags, each requiring every flag of the next: 10^5 inlined copies of each leaf.
    const layers = Array.from({ length: 6 }, (_, l) =>
      Array.from({ length: 10 }, (_, i) =>
        flag(`l${l}-${i}`, {
          rules: [rule('r', [{ attribute: 'a', operator: 'equals', values: ['x'] }])],
          prerequisites: l === 5 ? [] : Array.from({ length: 10 }, (_, j) => ({ flag: `l${l + 1}-${j}`, variants: ['on'] })),
        }),
      ),
    );
    const flags = layers.flat();
    assert.ok(flagOperands(flags[0]!, buildIndex(flags, [])) > 100_000);
    const env = compileEnvironment(flags, []);
    assert.equal(env.evaluate('l0-0', { a: 'x' })?.errorCode, 'GENERAL');
    assert.equal(env.evaluate('l4-0', { a: 'x' })?.value, 'on', 'a flag within the limit is evaluated');
  });
  it(`refuses ${MAX_RULES} rules of ${MAX_CONDITIONS} in conditions of ${MAX_VALUES} values, and answers GENERAL for one stored so`, () => {
    const rules = Array.from({ length: MAX_RULES }, (_, r) =>
      rule(
        `r${r}`,
        Array.from({ length: MAX_CONDITIONS }, (_, c) => inList(MAX_VALUES, `${r}-${c}`)),
      ),
    );
    const f = flag('huge', { rules });
    assert.match(operandsProblem(f, buildIndex([f], [])) ?? '', new RegExp(`more than ${MAX_FLAG_OPERANDS}`));
    const answer = compileEnvironment([f], []).evaluate('huge', { plan: 'nope' });
    assert.equal(answer?.errorCode, 'GENERAL');
    assert.match(answer?.errorDetails ?? '', /operands/);
    const within = flag('ok', { rules: [rule('a', [inList(MAX_VALUES, 'a'), inList(MAX_FLAG_OPERANDS - MAX_VALUES, 'b')])] });
    assert.equal(operandsProblem(within, buildIndex([within], [])), undefined);
    assert.equal(compileEnvironment([within], []).evaluate('ok', { plan: 'a-1' })?.reason, 'DEFAULT');
  });
});
