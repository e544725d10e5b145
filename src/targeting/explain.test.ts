import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileEnvironment } from './engine.ts';
import { explain } from './explain.ts';
import { CURRENT_BUCKETING, type Segment, type TargetedFlag } from './targeting.ts';

const segments: Segment[] = [
  {
    key: 'staff',
    name: 'Staff',
    description: '',
    match: 'any',
    conditions: [
      { attribute: 'email', operator: 'endsWith', values: ['@corp.com'] },
      { attribute: 'staff', operator: 'equals', values: [true] },
    ],
  },
];
const gate: TargetedFlag = {
  key: 'gate',
  type: 'boolean',
  targeting: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on', prerequisites: [], rules: [] },
};
const flag: TargetedFlag = {
  key: 'banner',
  type: 'string',
  targeting: {
    state: 'ENABLED',
    variants: { a: 'A', b: 'B', c: 'C' },
    defaultVariant: 'a',
    prerequisites: [{ flag: 'gate', variants: ['on'] }],
    rules: [
      {
        id: 'r1',
        name: 'Staff in FR',
        enabled: true,
        conditions: [
          { attribute: 'country', operator: 'equals', values: ['fr'] },
          { attribute: 'email', operator: 'matches', values: ['^[a-z]+@'] },
        ],
        segments: ['staff'],
        serve: { variant: 'c' },
      },
      { id: 'r2', name: 'Off', enabled: false, conditions: [], segments: [], serve: { variant: 'c' } },
      {
        id: 'r3',
        name: 'A/B',
        enabled: true,
        conditions: [],
        segments: [],
        serve: {
          split: {
            bucketing: CURRENT_BUCKETING,
            weights: [
              { variant: 'b', weight: 30 },
              { variant: 'c', weight: 70 },
            ],
          },
        },
      },
    ],
  },
};

describe('explain', () => {
  it('shows which rule matched and which conditions failed before it', () => {
    const x = explain([gate, flag], segments, 'banner', { targetingKey: 'u1', country: 'de', email: 'ann@corp.com' })!;
    assert.equal(x.matchedRuleId, 'r3');
    assert.deepEqual(
      x.rules[0]!.conditions.map((c) => c.held),
      [false, true],
    );
    assert.deepEqual(x.rules[0]!.segments, [
      {
        key: 'staff',
        held: true,
        conditions: [
          { condition: segments[0]!.conditions[0]!, held: true },
          { condition: segments[0]!.conditions[1]!, held: false },
        ],
      },
    ]);
    assert.equal(x.rules[0]!.held, false);
    assert.equal(x.rules[1]!.held, false);
    assert.equal(x.rules[2]!.held, true);
    assert.deepEqual(x.prerequisites, [{ flag: 'gate', variants: ['on'], variant: 'on', held: true }]);
  });

  it('gives the split bucket that agrees with the evaluation, over 300 keys', () => {
    const env = compileEnvironment([gate, flag], segments);
    for (let i = 0; i < 300; i++) {
      const ctx = { targetingKey: `user-${i}` };
      const split = explain([gate, flag], segments, 'banner', ctx)!.rules[2]!.split!;
      assert.ok(split.bucket! >= 0 && split.bucket! < 100);
      assert.equal(split.variant, split.bucket! < 30 ? 'b' : 'c');
      assert.equal(split.variant, env.evaluate('banner', ctx)!.variant);
    }
  });

  it('says when a split has nothing to bucket by, and answers undefined for an unknown flag', () => {
    const split = explain([gate, flag], segments, 'banner', {})!.rules[2]!.split!;
    assert.deepEqual(split, { bucketBy: 'targetingKey', totalWeight: 100 });
    assert.equal(explain([gate, flag], segments, 'nope', {}), undefined);
  });

  it('shows a failed prerequisite', () => {
    const off = { ...gate, targeting: { ...gate.targeting, defaultVariant: 'off' } };
    const x = explain([off, flag], segments, 'banner', { targetingKey: 'u' })!;
    assert.deepEqual(x.prerequisites, [{ flag: 'gate', variants: ['on'], variant: 'off', held: false }]);
    assert.equal(x.evaluation.reason, 'DEFAULT');
    assert.equal(x.matchedRuleId, undefined);
  });
});
