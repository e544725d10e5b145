import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cidrsOf, logicCost, logicCostProblem, regexStatesOf } from './cost.ts';
import { MAX_CONTEXT_ENTRIES, MAX_LOGIC_COST } from './limits.ts';
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
