import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_PATTERN_LENGTH, MAX_RULES } from './limits.ts';
import { regexProblem } from './regex.ts';
import { CURRENT_BUCKETING, type FlagType, type Rule, type TargetedFlag } from './targeting.ts';
import { environmentProblem, segmentProblem, targetingProblem, type KnownKeys } from './validate.ts';

const known: KnownKeys = {
  segments: new Set(['staff']),
  flags: new Map<string, FlagType>([
    ['other', 'boolean'],
    ['f', 'string'],
  ]),
};
const rule = (patch: Partial<Rule> = {}): Rule => ({ id: 'r1', name: 'r', enabled: true, conditions: [], segments: [], serve: { variant: 'a' }, ...patch });
function flag(patch: Record<string, unknown> = {}, type: FlagType = 'string'): TargetedFlag {
  return {
    key: 'f',
    type,
    targeting: { state: 'ENABLED', variants: { a: 'A', b: 'B' }, defaultVariant: 'a', prerequisites: [], rules: [], ...patch },
  } as TargetedFlag;
}
const cond = (c: Record<string, unknown>) => flag({ rules: [rule({ conditions: [{ attribute: 'x', operator: 'equals', values: ['v'], ...c } as never] })] });

describe('targetingProblem', () => {
  const rows: Array<[string, TargetedFlag, string | undefined]> = [
    ['a valid flag', flag({ rules: [rule({ conditions: [{ attribute: 'user.country', operator: 'in', values: ['fr'] }], segments: ['staff'] })] }), undefined],
    ['a variant of another type', flag({ variants: { a: 'A', b: 2 } }), '/variants/b'],
    ['a boolean flag with a string variant', flag({ variants: { on: 'yes' }, defaultVariant: 'on' }, 'boolean'), '/variants/on'],
    ['an object variant that is an array', flag({ variants: { a: [1] } }, 'object'), '/variants/a'],
    ['no variants', flag({ variants: {} }), '/variants'],
    ['an unknown default variant', flag({ defaultVariant: 'z' }), '/defaultVariant'],
    ['a null default variant', flag({ defaultVariant: null }), undefined],
    ['a bad state', flag({ state: 'OFF' }), '/state'],
    ['an unknown served variant', flag({ rules: [rule({ serve: { variant: 'z' } })] }), '/rules/0/serve/variant'],
    ['duplicate rule ids', flag({ rules: [rule(), rule()] }), '/rules/1/id'],
    ['an unknown segment', flag({ rules: [rule({ segments: ['nope'] })] }), '/rules/0/segments/0'],
    ['too many rules', flag({ rules: Array.from({ length: MAX_RULES + 1 }, (_, i) => rule({ id: `r${i}` })) }), '/rules'],
    [
      'a negative weight',
      flag({
        rules: [
          rule({
            serve: {
              split: {
                bucketing: CURRENT_BUCKETING,
                weights: [
                  { variant: 'a', weight: -1 },
                  { variant: 'b', weight: 5 },
                ],
              },
            },
          }),
        ],
      }),
      '/rules/0/serve/split/weights/0/weight',
    ],
    [
      'a fractional weight',
      flag({ rules: [rule({ serve: { split: { bucketing: CURRENT_BUCKETING, weights: [{ variant: 'a', weight: 0.5 }] } } })] }),
      '/rules/0/serve/split/weights/0/weight',
    ],
    [
      'weights adding up to 0',
      flag({ rules: [rule({ serve: { split: { bucketing: CURRENT_BUCKETING, weights: [{ variant: 'a', weight: 0 }] } } })] }),
      '/rules/0/serve/split/weights',
    ],
    [
      'an unknown bucketing version',
      flag({ rules: [rule({ serve: { split: { bucketing: 'v9', weights: [{ variant: 'a', weight: 1 }] } } as never })] }),
      '/rules/0/serve/split/bucketing',
    ],
    [
      'a split bucketing by a bad path',
      flag({ rules: [rule({ serve: { split: { bucketing: CURRENT_BUCKETING, bucketBy: 'a..b', weights: [{ variant: 'a', weight: 1 }] } } })] }),
      '/rules/0/serve/split/bucketBy',
    ],
    ['an unknown prerequisite flag', flag({ prerequisites: [{ flag: 'ghost', variants: ['on'] }] }), '/prerequisites/0/flag'],
    ['a flag as its own prerequisite', flag({ prerequisites: [{ flag: 'f', variants: ['a'] }] }), '/prerequisites/0/flag'],
    ['JSON Logic with rules', flag({ jsonLogic: { if: [true, 'a', null] }, rules: [rule()] }), '/jsonLogic'],
    ['an unknown operator', cond({ operator: 'like' }), '/rules/0/conditions/0/operator'],
    ['an empty attribute part', cond({ attribute: 'user..id' }), '/rules/0/conditions/0/attribute'],
    ['a prototype attribute', cond({ attribute: 'user.__proto__' }), '/rules/0/conditions/0/attribute'],
    ['a reserved $ attribute', cond({ attribute: '$flagpost.x' }), '/rules/0/conditions/0/attribute'],
    ['$flagd.timestamp with equals', cond({ attribute: '$flagd.timestamp' }), '/rules/0/conditions/0/attribute'],
    ['$flagd.timestamp after a date', cond({ attribute: '$flagd.timestamp', operator: 'after', values: ['2026-01-01'] }), undefined],
    ['$flagd.timestamp before now', cond({ attribute: '$flagd.timestamp', operator: 'before', values: ['now'] }), '/rules/0/conditions/0/values/0'],
    ['equals without values', cond({ values: [] }), '/rules/0/conditions/0/values'],
    ['startsWith with two values', cond({ operator: 'startsWith', values: ['a', 'b'] }), '/rules/0/conditions/0/values'],
    ['lt with a string', cond({ operator: 'lt', values: ['5'] }), '/rules/0/conditions/0/values/0'],
    ['an invalid semver', cond({ operator: 'semverGte', values: ['1.x'] }), '/rules/0/conditions/0/values/0'],
    ['a partial semver as flagd reads it', cond({ operator: 'semverCaret', values: ['v1.2'] }), undefined],
    ['an invalid date', cond({ operator: 'before', values: ['31/01/2026'] }), '/rules/0/conditions/0/values/0'],
    ['before now', cond({ operator: 'before', values: ['now'] }), undefined],
    ['exists with a value', cond({ operator: 'exists', values: [1] }), '/rules/0/conditions/0/values'],
    ['an invalid CIDR', cond({ operator: 'inCidr', values: ['10.0.0.0/33'] }), '/rules/0/conditions/0/values/0'],
    ['IPv6 CIDR', cond({ operator: 'inCidr', values: ['2001:db8::/32', '10.0.0.0/8'] }), undefined],
    ['case-insensitive lt', cond({ operator: 'lt', values: [1], caseInsensitive: true }), '/rules/0/conditions/0/caseInsensitive'],
    ['an object value', cond({ values: [{}] }), '/rules/0/conditions/0/values/0'],
    ['a catastrophic regex', cond({ operator: 'matches', values: ['^(a+)+$'] }), '/rules/0/conditions/0/values/0'],
  ];
  for (const [name, f, path] of rows) {
    it(`${path ? 'refuses' : 'accepts'} ${name}`, () => assert.equal(targetingProblem(f, known)?.path, path, JSON.stringify(targetingProblem(f, known))));
  }
});

describe('regexProblem: patterns that could hang the process are refused', () => {
  const refused: Array<[string, string]> = [
    ['^(a+)+$', 'nested quantifiers'],
    ['(x*)*y', 'nested quantifiers'],
    ['((ab)+c)*', 'nested quantifiers'],
    ['(a)\\1', 'backreferences'],
    ['(?<n>a)\\k<n>', 'backreferences'],
    ['foo(?=bar)', 'lookahead'],
    ['(?<!x)y', 'lookbehind'],
    ['a{1000}', 'linear time'],
    ['x'.repeat(MAX_PATTERN_LENGTH + 1), 'longer'],
    ['(', 'not a valid'],
    ['', 'empty'],
  ];
  for (const [pattern, why] of refused)
    it(`refuses ${pattern.slice(0, 20)} (${why})`, () => assert.match(regexProblem(pattern) ?? 'accepted', new RegExp(why)));
  for (const pattern of ['^[a-z]+@corp\\.com$', '(?:com|org)$', '^\\d{3}-\\d{4}$', '.*beta.*', '(ab)+c']) {
    it(`accepts ${pattern}`, () => assert.equal(regexProblem(pattern), undefined));
  }
});

describe('segmentProblem and environmentProblem', () => {
  it('refuses a segment without conditions and a bad key', () => {
    assert.equal(segmentProblem({ key: 's', name: 's', description: '', match: 'all', conditions: [] })?.path, '/conditions');
    assert.equal(segmentProblem({ key: 'a "b"', name: 's', description: '', match: 'all', conditions: [] })?.path, '/key');
  });
  const boolFlag = (key: string, prerequisites: Array<{ flag: string; variants: string[] }>): TargetedFlag => ({
    key,
    type: 'boolean',
    targeting: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'off', prerequisites, rules: [] },
  });
  it('refuses a prerequisite cycle, naming it', () => {
    const p = environmentProblem(
      [boolFlag('a', [{ flag: 'b', variants: ['on'] }]), boolFlag('b', [{ flag: 'c', variants: ['on'] }]), boolFlag('c', [{ flag: 'a', variants: ['on'] }])],
      [],
    );
    assert.match(p?.message ?? '', /cycle: a -> b -> c -> a/);
  });
  it('refuses a prerequisite variant the other flag does not have', () => {
    const p = environmentProblem([boolFlag('a', [{ flag: 'b', variants: ['maybe'] }]), boolFlag('b', [])], []);
    assert.deepEqual([p?.flagKey, p?.path], ['a', '/prerequisites/0/variants/0']);
  });
  it('refuses prerequisite chains deeper than the limit and accepts a shallow one', () => {
    const chain = Array.from({ length: 8 }, (_, i) => boolFlag(`f${i}`, i < 7 ? [{ flag: `f${i + 1}`, variants: ['on'] }] : []));
    assert.match(environmentProblem(chain, [])?.message ?? '', /deeper/);
    assert.equal(environmentProblem(chain.slice(4), []), undefined);
  });
});
