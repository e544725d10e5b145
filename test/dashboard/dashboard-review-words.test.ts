import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FieldProblem, Rule } from '../../dashboard/src/api.ts';
import { changeInWords, ruleChanges } from '../../dashboard/src/targeting/describe.ts';
import { emptyRule, evenPercents, fromRuleDraft, toRuleDraft } from '../../dashboard/src/targeting/rules.ts';

// Issue 31, the dashboard's pure parts, table-tested: targeting changes in words (item 3) and a new split
// that starts even (item 9). A variant's bad value marked at its value is checked in the browser.

const staff: Rule = { id: 'r1', name: 'Staff', conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@example.com'] }], serve: { variant: 'on' } };
const split = (on: number, off: number): Rule['serve'] => ({
  split: {
    weights: [
      { variant: 'on', weight: on },
      { variant: 'off', weight: off },
    ],
  },
});
const half: Rule = { id: 'r2', name: 'Half', serve: split(50, 50) };

describe('targeting changes in words', () => {
  it('says what happened to each rule, matched by id', () => {
    const rows: Array<[string, Rule[], Rule[], string[]]> = [
      ['added', [], [staff], ['added rule Staff: email ends with @example.com → on']],
      ['removed', [staff], [], ['removed rule Staff: email ends with @example.com → on']],
      ['split weights', [half], [{ ...half, serve: split(25, 75) }], ['rule Half: split 50/50 → 25/75 (on/off)']],
      ['serve', [staff], [{ ...staff, serve: { variant: 'off' } }], ['rule Staff: on → off']],
      ['switched off', [staff], [{ ...staff, enabled: false }], ['switched rule Staff off']],
      ['renamed', [staff], [{ ...staff, name: 'Team' }], ['renamed rule Staff → Team']],
      ['conditions', [staff], [{ ...staff, conditions: [] }], ['rule Staff: email ends with @example.com → everyone']],
      ['moved', [staff, half], [half, staff], ['rules in the order Half, Staff']],
      ['unchanged', [staff], [staff], []],
    ];
    for (const [name, before, after, lines] of rows) assert.deepEqual(ruleChanges(before, after), lines, name);
  });

  it('says variants, prerequisites and conditions in words, and leaves other fields to before → after', () => {
    assert.deepEqual(changeInWords('variants', { a: 'A' }, { a: 'B', c: 'C' }), ['variant a: A → B', 'added variant c = C']);
    assert.deepEqual(changeInWords('prerequisites', [], [{ flag: 'login', variants: ['on'] }]), ['added prerequisite login serves on']);
    assert.deepEqual(changeInWords('conditions', [staff.conditions![0]], []), ['removed condition email ends with @example.com']);
    assert.equal(changeInWords('description', 'a', 'b'), undefined);
  });
});

describe('new splits and variants', () => {
  it('starts a new split even, in percentages that add up to 100', () => {
    const rows: Array<[number, number[]]> = [
      [1, [100]],
      [2, [50, 50]],
      [3, [33.33, 33.33, 33.34]],
      [4, [25, 25, 25, 25]],
    ];
    for (const [n, percents] of rows) assert.deepEqual(evenPercents(n), percents, String(n));
    const rule = { ...emptyRule(['a', 'b', 'c']), serve: 'split' as const };
    const problems: FieldProblem[] = [];
    const sent = fromRuleDraft(rule, 0, problems);
    assert.deepEqual(problems, []);
    assert.deepEqual(sent.serve.split?.weights, [
      { variant: 'a', weight: 3333 },
      { variant: 'b', weight: 3333 },
      { variant: 'c', weight: 3334 },
    ]);
    // A rule that served a variant and is switched to a split starts even too.
    const switched = { ...toRuleDraft(staff, ['on', 'off']), serve: 'split' as const };
    assert.deepEqual(
      switched.split.rows.map((r) => r.percent),
      ['50', '50'],
    );
  });
});
