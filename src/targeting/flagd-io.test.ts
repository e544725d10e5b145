import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EvaluationContext } from '@openfeature/core';
import { FlagdCore } from '@openfeature/flagd-core';
import { compileEnvironment } from './engine.ts';
import { flagPortability, toFlagdDefinition } from './flagd-export.ts';
import { inferFlagType, parseFlagdDefinition } from './flagd-import.ts';
import { CURRENT_BUCKETING, type Segment, type TargetedFlag } from './targeting.ts';

const segments: Segment[] = [
  { key: 'staff', name: 'staff', description: '', match: 'any', conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@corp.com'] }] },
  { key: 'office', name: 'office', description: '', match: 'all', conditions: [{ attribute: 'ip', operator: 'inCidr', values: ['10.0.0.0/8'] }] },
];
const flags: TargetedFlag[] = [
  {
    key: 'checkout',
    type: 'string',
    targeting: {
      state: 'ENABLED',
      variants: { old: 'v1', new: 'v2', beta: 'v3' },
      defaultVariant: 'old',
      prerequisites: [{ flag: 'kill', variants: ['on'] }],
      metadata: { team: 'payments' },
      rules: [
        {
          id: 'r-staff',
          name: 'Staff',
          enabled: true,
          conditions: [{ attribute: 'app', operator: 'semverGte', values: ['2.0.0'] }],
          segments: ['staff'],
          serve: { variant: 'beta' },
        },
        {
          id: 'r-off',
          name: 'Parked',
          enabled: false,
          conditions: [{ attribute: 'plan', operator: 'in', values: ['pro'] }],
          segments: [],
          serve: { variant: 'new' },
        },
        {
          id: 'r-roll',
          name: 'Rollout',
          enabled: true,
          conditions: [],
          segments: [],
          serve: {
            split: {
              bucketing: CURRENT_BUCKETING,
              bucketBy: 'org.id',
              weights: [
                { variant: 'new', weight: 25 },
                { variant: 'old', weight: 75 },
              ],
            },
          },
        },
      ],
    },
  },
  { key: 'kill', type: 'boolean', targeting: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on', prerequisites: [], rules: [] } },
  {
    key: 'vpn',
    type: 'boolean',
    targeting: {
      state: 'ENABLED',
      variants: { on: true, off: false },
      defaultVariant: 'off',
      prerequisites: [],
      rules: [
        {
          id: 'r1',
          name: 'Office',
          enabled: true,
          conditions: [{ attribute: 'email', operator: 'matches', values: ['^[a-z]+@'] }],
          segments: ['office'],
          serve: { variant: 'on' },
        },
      ],
    },
  },
];

describe('flagd export and import', () => {
  const doc = toFlagdDefinition(flags, segments);

  it('exports flags, portable segments as $evaluators and the schema', () => {
    assert.equal(doc.$schema, 'https://flagd.dev/schema/v0/flags.json');
    assert.deepEqual(Object.keys(doc.$evaluators ?? {}), ['staff']);
    assert.deepEqual(doc.flags.checkout!.targeting && JSON.stringify(doc.flags.checkout!.targeting).includes('{"$ref":"staff"}'), true);
  });

  it('exports a flag flagd cannot evaluate as DISABLED with a note, and says so through flagPortability', () => {
    const vpn = doc.flags.vpn!;
    assert.equal(vpn.state, 'DISABLED');
    assert.equal(vpn.targeting, undefined);
    assert.equal(vpn.metadata?.['flagpost.portable'], false);
    assert.match(String(vpn.metadata?.['flagpost.note']), /matches on email.*inCidr on ip/);
    assert.deepEqual(flagPortability('checkout', flags, segments), { portable: true, reasons: [] });
    assert.equal(flagPortability('vpn', flags, segments)?.portable, false);
  });

  it('round-trips export -> import to the same typed model (rule ids, names, switched-off rules, segments)', () => {
    const back = parseFlagdDefinition(JSON.parse(JSON.stringify(doc)));
    assert.equal(back.problem, undefined, JSON.stringify(back.problem));
    assert.deepEqual(back.flags, flags);
    assert.deepEqual(back.segments!.map((s) => s.key).sort(), ['office', 'staff']);
    assert.deepEqual(
      back.segments!.find((s) => s.key === 'office'),
      segments[1],
    );
  });

  it('reads the compiled shape back as typed rules without the embedded copy, and JSON Logic otherwise', () => {
    const bare = JSON.parse(JSON.stringify(doc));
    delete bare.flags.checkout.metadata['flagpost.targeting'];
    bare.flags.checkout.targeting = bare.flags.checkout.targeting.if[1];
    const back = parseFlagdDefinition(bare);
    assert.equal(back.problem, undefined);
    const checkout = back.flags!.find((f) => f.key === 'checkout')!;
    assert.deepEqual(
      checkout.targeting.rules.map((r) => [r.id, r.conditions.length, r.segments, 'split' in r.serve]),
      [
        ['rule-1', 1, ['staff'], false],
        ['rule-2', 0, [], true],
      ],
    );
    bare.flags.checkout.targeting = { if: [{ '==': [{ var: 'a' }, 1] }, 'new', null] };
    const custom = parseFlagdDefinition(bare).flags!.find((f) => f.key === 'checkout')!;
    assert.deepEqual(custom.targeting.jsonLogic, { if: [{ '==': [{ var: 'a' }, 1] }, 'new', null] });
    assert.deepEqual(custom.targeting.rules, []);
  });

  it('evaluates an imported definition as flagd-core does', () => {
    const back = parseFlagdDefinition(JSON.parse(JSON.stringify(doc)));
    const env = compileEnvironment(back.flags!, back.segments!);
    const core = new FlagdCore();
    core.setConfigurations(JSON.stringify(doc));
    for (const ctx of [{ email: 'a@corp.com', app: '2.1.0' }, { org: { id: 'o-1' } }, { org: { id: 'o-7' } }, {}] as EvaluationContext[]) {
      assert.equal(env.evaluate('checkout', ctx)!.variant, core.resolveStringEvaluation('checkout', 'x', ctx).variant);
    }
  });

  it('inlines $evaluators that are not shaped like segments, and keeps an unknown $ref (flagd: PARSE_ERROR)', () => {
    const back = parseFlagdDefinition({
      flags: {
        a: { state: 'ENABLED', variants: { y: 'yes', n: 'no' }, defaultVariant: 'n', targeting: { if: [{ $ref: 'vip' }, 'y', null] } },
        b: { state: 'ENABLED', variants: { y: 'yes', n: 'no' }, defaultVariant: 'n', targeting: { if: [{ $ref: 'ghost' }, 'y', null] } },
      },
      $evaluators: { vip: { '==': ['gold', { var: ['tier'] }] } },
    });
    assert.equal(back.problem, undefined);
    assert.deepEqual(back.segments, []);
    assert.deepEqual(back.flags![0]!.targeting.jsonLogic, { if: [{ '==': ['gold', { var: ['tier'] }] }, 'y', null] });
    const env = compileEnvironment(back.flags!, back.segments!);
    assert.equal(env.evaluate('a', { tier: 'gold' })!.variant, 'y');
    assert.equal(env.evaluate('b', {})!.errorCode, 'PARSE_ERROR');
  });

  it('accepts flags as a list with keys, merges flag-set metadata under flag metadata', () => {
    const back = parseFlagdDefinition({
      metadata: { owner: 'web', v: 1 },
      flags: [{ key: 'x', state: 'ENABLED', variants: { a: 1 }, defaultVariant: 'a', metadata: { v: 2 } }],
    });
    assert.deepEqual(back.flags, [
      {
        key: 'x',
        type: 'number',
        targeting: { state: 'ENABLED', variants: { a: 1 }, defaultVariant: 'a', prerequisites: [], rules: [], metadata: { owner: 'web', v: 2 } },
      },
    ]);
  });

  const problems: Array<[string, unknown, string, string | undefined]> = [
    ['not an object', [], '', undefined],
    ['no flags', {}, '/flags', undefined],
    ['a bad state', { flags: { x: { state: 'ON', variants: { a: 1 } } } }, '/flags/x/state', 'x'],
    ['mixed variant types', { flags: { x: { state: 'ENABLED', variants: { a: 1, b: 'one' } } } }, '/flags/x/variants', 'x'],
    ['array variants', { flags: { x: { state: 'ENABLED', variants: { a: [1] } } } }, '/flags/x/variants', 'x'],
    ['an unknown default variant', { flags: { x: { state: 'ENABLED', variants: { a: 1 }, defaultVariant: 'b' } } }, '/flags/x/defaultVariant', 'x'],
    [
      'an unknown operator',
      { flags: { x: { state: 'ENABLED', variants: { a: 1 }, targeting: { if: [{ regex: ['a', 'b'] }, 'a', null] } } } },
      '/flags/x/targeting/if/0',
      'x',
    ],
    ['a reserved $flagd var', { flags: { x: { state: 'ENABLED', variants: { a: 1 }, targeting: { var: '$flagd.secret' } } } }, '/flags/x/targeting/var', 'x'],
    ['bad metadata', { flags: { x: { state: 'ENABLED', variants: { a: 1 }, metadata: { o: {} } } } }, '/flags/x/metadata', 'x'],
    [
      'duplicate keys in a list',
      {
        flags: [
          { key: 'x', state: 'ENABLED', variants: { a: 1 } },
          { key: 'x', state: 'ENABLED', variants: { a: 1 } },
        ],
      },
      '/flags/1/key',
      'x',
    ],
  ];
  for (const [name, input, path, flagKey] of problems) {
    it(`names the first problem: ${name}`, () => {
      const r = parseFlagdDefinition(input);
      assert.equal(r.problem?.path, path, JSON.stringify(r.problem));
      assert.equal(r.problem?.flagKey, flagKey);
    });
  }

  it('infers the flag type from the variants', () => {
    assert.equal(inferFlagType({ a: true, b: false }), 'boolean');
    assert.equal(inferFlagType({ a: 1, b: 0.5 }), 'number');
    assert.equal(inferFlagType({ a: {}, b: { x: 1 } }), 'object');
    assert.equal(inferFlagType({ a: 'x', b: 1 }), undefined);
  });
});
