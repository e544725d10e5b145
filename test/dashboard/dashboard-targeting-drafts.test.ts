import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FieldProblem, Rule } from '../../dashboard/src/api.ts';
import { type ConditionDraft, emptyCondition, fromDraft, splitValues, toDraft } from '../../dashboard/src/targeting/conditions.ts';
import { followVariant, fromRuleDraft, toRuleDraft } from '../../dashboard/src/targeting/rules.ts';

// The dashboard's targeting editors keep what is typed as text and turn it back into the admin API's
// shapes (issue 18). Pure functions, table-tested: values typed by operator, commas escaped, splits
// whose percentages become weights, and splits left untouched that keep their weights exactly.

const draft = (patch: Partial<ConditionDraft>): ConditionDraft => ({ ...emptyCondition(), attribute: 'user.x', ...patch });

describe('condition drafts', () => {
  it('splits values at unescaped commas, trimmed, without empty parts', () => {
    const rows: Array<[string, string[]]> = [
      ['DE, AT ,CH', ['DE', 'AT', 'CH']],
      ['a,,b, ', ['a', 'b']],
      ['1\\,5, 2', ['1,5', '2']],
      ['back\\\\slash', ['back\\slash']],
      ['', []],
    ];
    for (const [text, values] of rows) assert.deepEqual(splitValues(text), values, text);
  });

  it('types the values by operator and value type, and names what cannot be read', () => {
    const rows: Array<[Partial<ConditionDraft>, unknown]> = [
      [{ operator: 'in', text: 'pro, enterprise' }, { values: ['pro', 'enterprise'] }],
      [{ operator: 'in', valueType: 'number', text: '1, 2.5' }, { values: [1, 2.5] }],
      [{ operator: 'equals', valueType: 'boolean', text: 'true' }, { values: [true] }],
      [{ operator: 'equals', valueType: 'boolean', text: 'yes' }, { problem: 'yes is not true or false' }],
      [{ operator: 'gte', valueType: 'string', text: ' 18 ' }, { values: [18] }],
      [{ operator: 'lt', text: 'abc' }, { problem: 'abc is not a number' }],
      [{ operator: 'startsWith', valueType: 'number', text: '12' }, { values: ['12'] }],
      [{ operator: 'matches', text: '^a, b$' }, { values: ['^a, b$'] }],
      [{ operator: 'semverGte', text: '' }, { problem: 'Enter a value' }],
      [{ operator: 'in', text: ' , ' }, { problem: 'Enter at least one value' }],
      [{ operator: 'exists', text: 'ignored' }, { values: [] }],
      [{ operator: 'inCidr', text: '10.0.0.0/8, 2001:db8::/32' }, { values: ['10.0.0.0/8', '2001:db8::/32'] }],
    ];
    for (const [patch, expected] of rows) {
      const r = fromDraft(draft(patch));
      assert.deepEqual(r.problem !== undefined ? { problem: r.problem } : { values: r.condition.values }, expected, JSON.stringify(patch));
    }
  });

  it('keeps not and the case option only where the operator takes it', () => {
    assert.deepEqual(fromDraft(draft({ operator: 'endsWith', text: '@example.com', negate: true, caseInsensitive: true })).condition, {
      attribute: 'user.x',
      operator: 'endsWith',
      values: ['@example.com'],
      negate: true,
      caseInsensitive: true,
    });
    assert.deepEqual(fromDraft(draft({ operator: 'lt', text: '3', caseInsensitive: true })).condition, { attribute: 'user.x', operator: 'lt', values: [3] });
  });

  it('reads a condition back as the text it would be typed as', () => {
    const conditions = [
      { attribute: 'user.tags', operator: 'in' as const, values: ['a,b', 'c'] },
      { attribute: 'user.age', operator: 'in' as const, values: [18, 21] },
      { attribute: 'user.name', operator: 'matches' as const, values: ['^x, y$'] },
    ];
    for (const c of conditions) assert.deepEqual(fromDraft(toDraft(c)).condition, c);
  });
});

describe('rule drafts', () => {
  const names = ['on', 'off'];
  const splitRule = (weights: Array<{ variant: string; weight: number }>): Rule => ({
    id: 'r1',
    name: 'Rollout',
    enabled: true,
    conditions: [],
    segments: [],
    serve: { split: { bucketing: 'flagd-fractional-v2', weights } },
  });

  it('sends an untouched split with its weights as they were, whatever its percentages show', () => {
    const d = toRuleDraft(
      splitRule([
        { variant: 'on', weight: 1 },
        { variant: 'off', weight: 2 },
      ]),
      names,
    );
    assert.deepEqual(
      d.split.rows.map((r) => r.percent),
      ['33.33', '66.67'],
    );
    const problems: FieldProblem[] = [];
    assert.deepEqual(fromRuleDraft(d, 0, problems).serve, {
      split: {
        bucketing: 'flagd-fractional-v2',
        weights: [
          { variant: 'on', weight: 1 },
          { variant: 'off', weight: 2 },
        ],
      },
    });
    assert.deepEqual(problems, []);
  });

  it('turns edited percentages into weights: whole ones as they are, decimals in hundredths', () => {
    const rows: Array<[string[], Array<[string, number]>]> = [
      [
        ['25', '75'],
        [
          ['on', 25],
          ['off', 75],
        ],
      ],
      [
        ['33.33', '66.67'],
        [
          ['on', 3333],
          ['off', 6667],
        ],
      ],
      [
        ['100', ''],
        [
          ['on', 100],
          ['off', 0],
        ],
      ],
    ];
    for (const [percents, weights] of rows) {
      const d = toRuleDraft(
        splitRule([
          { variant: 'on', weight: 50 },
          { variant: 'off', weight: 50 },
        ]),
        names,
      );
      d.split.touched = true;
      d.split.rows = d.split.rows.map((r, i) => ({ ...r, percent: percents[i]! }));
      d.split.bucketBy = ' company.id ';
      const problems: FieldProblem[] = [];
      const serve = fromRuleDraft(d, 2, problems).serve as { split: { bucketBy?: string; weights: Array<{ variant: string; weight: number }> } };
      assert.deepEqual(problems, [], percents.join());
      assert.equal(serve.split.bucketBy, 'company.id');
      assert.deepEqual(
        serve.split.weights.map((w) => [w.variant, w.weight]),
        weights,
      );
    }
  });

  it('refuses percentages that do not add up to 100, at the path the API would name', () => {
    const d = toRuleDraft(
      splitRule([
        { variant: 'on', weight: 50 },
        { variant: 'off', weight: 50 },
      ]),
      names,
    );
    d.split.touched = true;
    d.split.rows = [
      { variant: 'on', percent: '25' },
      { variant: 'off', percent: '70' },
    ];
    const problems: FieldProblem[] = [];
    fromRuleDraft(d, 1, problems);
    assert.deepEqual(problems, [{ field: 'rules.1.serve.split.weights', reason: 'The percentages add up to 95 %, not 100 %' }]);
  });

  it('follows a renamed variant without touching the weights, and re-checks a split that loses a variant with users', () => {
    const d = toRuleDraft(
      splitRule([
        { variant: 'on', weight: 1 },
        { variant: 'off', weight: 3 },
      ]),
      names,
    );
    const [renamed] = followVariant([d], 'on', 'yes');
    assert.equal(renamed!.split.touched, false);
    assert.deepEqual(renamed!.split.original!.weights, [
      { variant: 'yes', weight: 1 },
      { variant: 'off', weight: 3 },
    ]);
    assert.deepEqual(
      renamed!.split.rows.map((r) => r.variant),
      ['yes', 'off'],
    );
    const [removed] = followVariant([d], 'off', undefined);
    assert.equal(removed!.split.touched, true);
    assert.deepEqual(
      removed!.split.rows.map((r) => r.variant),
      ['on'],
    );
    const served = { ...toRuleDraft({ ...splitRule([]), serve: { variant: 'on' } }, names) };
    assert.equal(followVariant([served], 'on', 'yes')[0]!.variant, 'yes');
  });
});
