import assert from 'node:assert/strict';
import { BlockList } from 'node:net';
import { describe, it } from 'node:test';
import { compileEnvironment } from './engine.ts';
import { CURRENT_BUCKETING, type Condition, type FlagTargeting, type Rule, type Segment, type TargetedFlag } from './targeting.ts';

const NOW = Date.parse('2026-06-01T00:00:00Z');

function boolFlag(key: string, rules: Rule[], extra: Partial<FlagTargeting> = {}): TargetedFlag {
  return {
    key,
    type: 'boolean',
    targeting: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'off', prerequisites: [], rules, ...extra },
  };
}
const rule = (id: string, conditions: Condition[], serve: Rule['serve'] = { variant: 'on' }, segments: string[] = []): Rule => ({
  id,
  name: `rule ${id}`,
  enabled: true,
  conditions,
  segments,
  serve,
});
const split = (weights: Array<[string, number]>, bucketBy?: string): Rule['serve'] => ({
  split: { bucketing: CURRENT_BUCKETING, ...(bucketBy ? { bucketBy } : {}), weights: weights.map(([variant, weight]) => ({ variant, weight })) },
});

/** Whether a one-condition rule matches the context. */
function holds(condition: Condition, context: unknown): boolean {
  const env = compileEnvironment([boolFlag('f', [rule('r', [condition])])], [], { now: () => NOW });
  return env.evaluate('f', context)!.value === true;
}

describe('targeting engine: operators', () => {
  const rows: Array<[string, Condition, unknown, boolean]> = [
    ['equals one value', { attribute: 'country', operator: 'equals', values: ['fr'] }, { country: 'fr' }, true],
    ['equals is case-sensitive', { attribute: 'country', operator: 'equals', values: ['fr'] }, { country: 'FR' }, false],
    ['equals case-insensitive', { attribute: 'country', operator: 'equals', values: ['fr'], caseInsensitive: true }, { country: 'FR' }, true],
    ['equals any of several', { attribute: 'country', operator: 'equals', values: ['de', 'fr'] }, { country: 'fr' }, true],
    ['not equals', { attribute: 'country', operator: 'equals', values: ['fr'], negate: true }, { country: 'de' }, true],
    ['in a list', { attribute: 'plan', operator: 'in', values: ['pro', 'team'] }, { plan: 'team' }, true],
    ['not in a list', { attribute: 'plan', operator: 'in', values: ['pro', 'team'], negate: true }, { plan: 'free' }, true],
    ['in case-insensitive', { attribute: 'plan', operator: 'in', values: ['pro', 'team'], caseInsensitive: true }, { plan: 'TEAM' }, true],
    ['in with numbers', { attribute: 'tier', operator: 'in', values: [1, 2] }, { tier: 2 }, true],
    ['a missing attribute is in no list', { attribute: 'plan', operator: 'in', values: ['pro'] }, {}, false],
    ['starts with', { attribute: 'email', operator: 'startsWith', values: ['admin@'] }, { email: 'admin@x.io' }, true],
    ['starts with case-insensitive', { attribute: 'email', operator: 'startsWith', values: ['admin@'], caseInsensitive: true }, { email: 'ADMIN@x.io' }, true],
    ['does not start with', { attribute: 'email', operator: 'startsWith', values: ['admin@'], negate: true }, { email: 'bob@x.io' }, true],
    ['ends with', { attribute: 'email', operator: 'endsWith', values: ['@corp.com'] }, { email: 'a@corp.com' }, true],
    ['ends with case-insensitive', { attribute: 'email', operator: 'endsWith', values: ['@corp.com'], caseInsensitive: true }, { email: 'a@CORP.com' }, true],
    ['ends with on a number is false', { attribute: 'n', operator: 'endsWith', values: ['3'] }, { n: 123 }, false],
    ['contains a substring', { attribute: 'ua', operator: 'contains', values: ['Firefox'] }, { ua: 'Mozilla Firefox 140' }, true],
    ['contains in an array', { attribute: 'roles', operator: 'contains', values: ['admin'] }, { roles: ['user', 'admin'] }, true],
    ['contains case-insensitive', { attribute: 'ua', operator: 'contains', values: ['firefox'], caseInsensitive: true }, { ua: 'Mozilla FIREFOX' }, true],
    ['contains on a missing attribute', { attribute: 'ua', operator: 'contains', values: ['x'] }, {}, false],
    ['less than', { attribute: 'age', operator: 'lt', values: [18] }, { age: 17 }, true],
    ['a missing number is not less than', { attribute: 'age', operator: 'lt', values: [18] }, {}, false],
    ['less or equal', { attribute: 'age', operator: 'lte', values: [18] }, { age: 18 }, true],
    ['greater than', { attribute: 'age', operator: 'gt', values: [18] }, { age: 18 }, false],
    ['greater or equal', { attribute: 'age', operator: 'gte', values: [18] }, { age: 18 }, true],
    ['semver equal', { attribute: 'app', operator: 'semverEq', values: ['2.0.0'] }, { app: '2.0.0' }, true],
    ['semver less', { attribute: 'app', operator: 'semverLt', values: ['2.0.0'] }, { app: '1.9.9' }, true],
    ['semver less or equal', { attribute: 'app', operator: 'semverLte', values: ['2.0.0'] }, { app: '2.0.1' }, false],
    ['semver greater', { attribute: 'app', operator: 'semverGt', values: ['2.0.0'] }, { app: '2.0.0-rc.1' }, false],
    ['semver greater or equal', { attribute: 'app', operator: 'semverGte', values: ['2.0.0'] }, { app: '10.0.0' }, true],
    ['semver caret (same major)', { attribute: 'app', operator: 'semverCaret', values: ['2.1.0'] }, { app: '2.9.0' }, true],
    ['semver tilde (same minor)', { attribute: 'app', operator: 'semverTilde', values: ['2.1.0'] }, { app: '2.2.0' }, false],
    ['semver of garbage is false', { attribute: 'app', operator: 'semverGte', values: ['1.0.0'] }, { app: 'latest' }, false],
    ['the evaluation time after a past date', { attribute: '$flagd.timestamp', operator: 'after', values: ['2020-01-01T00:00:00Z'] }, {}, true],
    ['the evaluation time before a past date', { attribute: '$flagd.timestamp', operator: 'before', values: ['2020-01-01'] }, {}, false],
    ['a context date before a date', { attribute: 'signup', operator: 'before', values: ['2026-01-01'] }, { signup: '2025-12-31T23:00:00Z' }, true],
    ['a context date after now', { attribute: 'trialEnds', operator: 'after', values: ['now'] }, { trialEnds: '2026-06-02' }, true],
    ['a context date before now', { attribute: 'trialEnds', operator: 'before', values: ['now'] }, { trialEnds: '2026-06-02' }, false],
    ['Unix seconds in the context', { attribute: 'at', operator: 'before', values: ['now'] }, { at: NOW / 1000 - 1 }, true],
    ['a non-date is neither before nor after', { attribute: 'signup', operator: 'before', values: ['2026-01-01'] }, { signup: 'yesterday' }, false],
    ['exists', { attribute: 'beta', operator: 'exists', values: [] }, { beta: false }, true],
    ['exists with 0 and empty string', { attribute: 'n', operator: 'exists', values: [] }, { n: 0 }, true],
    ['exists with an empty string', { attribute: 'n', operator: 'exists', values: [] }, { n: '' }, true],
    ['null does not exist', { attribute: 'n', operator: 'exists', values: [] }, { n: null }, false],
    ['does not exist', { attribute: 'n', operator: 'exists', values: [], negate: true }, {}, true],
    ['nested attribute', { attribute: 'user.org.id', operator: 'equals', values: ['o1'] }, { user: { org: { id: 'o1' } } }, true],
    ['IPv4 in a CIDR', { attribute: 'ip', operator: 'inCidr', values: ['10.0.0.0/8'] }, { ip: '10.2.3.4' }, true],
    ['IPv4 outside a CIDR', { attribute: 'ip', operator: 'inCidr', values: ['10.0.0.0/8'] }, { ip: '11.2.3.4' }, false],
    ['IPv6 in a CIDR', { attribute: 'ip', operator: 'inCidr', values: ['2001:db8::/32'] }, { ip: '2001:db8:1::5' }, true],
    ['IPv4-mapped IPv6 in an IPv4 CIDR', { attribute: 'ip', operator: 'inCidr', values: ['192.168.0.0/16'] }, { ip: '::ffff:192.168.1.1' }, true],
    ['not an address', { attribute: 'ip', operator: 'inCidr', values: ['10.0.0.0/8'] }, { ip: '10.0.0.x' }, false],
    ['not in a CIDR', { attribute: 'ip', operator: 'inCidr', values: ['10.0.0.0/8'], negate: true }, { ip: '11.0.0.1' }, true],
    ['matches a pattern', { attribute: 'email', operator: 'matches', values: ['^[a-z]+@corp\\.com$'] }, { email: 'ann@corp.com' }, true],
    ['does not match', { attribute: 'email', operator: 'matches', values: ['^[a-z]+@corp\\.com$'] }, { email: 'Ann@corp.com' }, false],
    ['over-long input never matches', { attribute: 's', operator: 'matches', values: ['a'] }, { s: 'a'.repeat(5000) }, false],
  ];
  for (const [name, condition, context, expected] of rows) {
    it(`${name}: ${expected ? 'holds' : 'fails'}`, () => assert.equal(holds(condition, context), expected));
  }
});

describe("targeting engine: inCidr agrees with node's BlockList", () => {
  it('for every prefix length and addresses around each network edge, plain and IPv4-mapped', () => {
    const cidrs = ['0.0.0.0/0', '10.0.0.0/8', '192.168.4.0/22', '203.0.113.7/32', '198.51.100.128/25', '172.16.0.0/12', '100.64.0.1/31'];
    for (let bits = 0; bits <= 32; bits += 3) cidrs.push(`128.0.0.0/${bits}`);
    const addresses = [
      '0.0.0.0',
      '255.255.255.255',
      '9.255.255.255',
      '10.0.0.0',
      '10.255.255.255',
      '11.0.0.0',
      '192.168.3.255',
      '192.168.4.0',
      '192.168.7.255',
      '192.168.8.0',
      '203.0.113.6',
      '203.0.113.7',
      '203.0.113.8',
      '198.51.100.127',
      '198.51.100.128',
      '198.51.100.255',
      '172.15.255.255',
      '172.31.255.255',
      '172.32.0.0',
      '100.64.0.0',
      '100.64.0.1',
      '100.64.0.2',
      '127.255.255.255',
      '128.0.0.0',
      '191.255.255.255',
      '192.0.0.0',
    ];
    for (const cidr of cidrs) {
      const [net, bits] = cidr.split('/');
      const list = new BlockList();
      list.addSubnet(net!, Number(bits), 'ipv4');
      const env = compileEnvironment(
        [
          {
            key: 'f',
            type: 'boolean',
            targeting: {
              state: 'ENABLED',
              variants: { on: true, off: false },
              defaultVariant: 'off',
              prerequisites: [],
              rules: [
                {
                  id: 'r',
                  name: 'r',
                  enabled: true,
                  conditions: [{ attribute: 'ip', operator: 'inCidr', values: [cidr] }],
                  segments: [],
                  serve: { variant: 'on' },
                },
              ],
            },
          },
        ],
        [],
      );
      for (const ip of addresses) {
        for (const given of [ip, `::ffff:${ip}`]) {
          assert.equal(env.evaluate('f', { ip: given })!.value, list.check(ip, 'ipv4'), `${given} in ${cidr}`);
        }
      }
    }
  });
});

describe('targeting engine: rules, segments, reasons and metadata', () => {
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
    {
      key: 'eu',
      name: 'EU',
      description: '',
      match: 'all',
      conditions: [
        { attribute: 'country', operator: 'in', values: ['fr', 'de'] },
        { attribute: 'country', operator: 'exists', values: [] },
      ],
    },
  ];
  const flag = boolFlag('f', [
    { ...rule('off-rule', [{ attribute: 'x', operator: 'exists', values: [] }]), enabled: false },
    rule('staff-eu', [], { variant: 'on' }, ['staff', 'eu']),
    rule(
      'beta',
      [{ attribute: 'beta', operator: 'equals', values: [true] }],
      split([
        ['on', 1],
        ['off', 0],
      ]),
    ),
  ]);
  const env = compileEnvironment([flag], segments);

  it('serves the first matching rule with its id, name and segments', () => {
    const e = env.evaluate('f', { email: 'a@corp.com', country: 'fr', beta: true })!;
    assert.deepEqual(e, {
      key: 'f',
      value: true,
      variant: 'on',
      reason: 'TARGETING_MATCH',
      metadata: { ruleId: 'staff-eu', ruleName: 'rule staff-eu', segments: 'staff,eu' },
    });
  });
  it('needs every segment of a rule (all: every condition, any: one)', () => {
    assert.equal(env.evaluate('f', { staff: true, country: 'it' })!.reason, 'DEFAULT');
    assert.equal(env.evaluate('f', { staff: true, country: 'de' })!.metadata.ruleId, 'staff-eu');
  });
  it('answers SPLIT with the bucketing version for a split', () => {
    const e = env.evaluate('f', { targetingKey: 'u1', beta: true })!;
    assert.equal(e.reason, 'SPLIT');
    assert.equal(e.metadata.bucketing, CURRENT_BUCKETING);
  });
  it('never matches a switched-off rule', () => assert.equal(env.evaluate('f', { x: 1 })!.reason, 'DEFAULT'));
  it('answers DEFAULT with the default variant when no rule matches', () => {
    assert.deepEqual(env.evaluate('f', {}), { key: 'f', value: false, variant: 'off', reason: 'DEFAULT', metadata: {} });
  });
  it('answers undefined for an unknown key and STATIC without rules', () => {
    const e2 = compileEnvironment([boolFlag('s', [], { metadata: { team: 'web' } })], []);
    assert.equal(e2.evaluate('nope', {}), undefined);
    assert.deepEqual(e2.evaluate('s', { any: 1 }), { key: 's', value: false, variant: 'off', reason: 'STATIC', metadata: { team: 'web' } });
    assert.equal(e2.isStatic('s'), true);
    assert.equal(env.isStatic('f'), false);
  });
});

describe('targeting engine: DISABLED, false and no default variant', () => {
  const env = compileEnvironment(
    [
      boolFlag('killed', [rule('r', [])], { state: 'DISABLED' }),
      boolFlag('off', []),
      boolFlag('nodefault', [rule('r', [{ attribute: 'a', operator: 'exists', values: [] }])], { defaultVariant: null }),
    ],
    [],
  );
  it('answers DISABLED without a value for a flag switched off entirely', () => {
    assert.deepEqual(env.evaluate('killed', {}), { key: 'killed', reason: 'DISABLED', metadata: {} });
  });
  it('answers false as a value (STATIC) for a boolean flag serving off', () => {
    assert.deepEqual(env.evaluate('off', {}), { key: 'off', value: false, variant: 'off', reason: 'STATIC', metadata: {} });
  });
  it('answers no value (DEFAULT) when nothing matches and there is no default variant', () => {
    assert.deepEqual(env.evaluate('nodefault', {}), { key: 'nodefault', reason: 'DEFAULT', metadata: {} });
    assert.equal(env.evaluate('nodefault', { a: 1 })!.value, true);
  });
  it('leaves DISABLED flags and flags without a value out of the bulk answer, keeps false', () => {
    assert.deepEqual(
      env.evaluateAll({}).map((e) => [e.key, e.value]),
      [['off', false]],
    );
  });
});

describe('targeting engine: splits', () => {
  const keys = Array.from({ length: 10_000 }, (_, i) => `user-${i}`);
  const served = (weights: Array<[string, number]>, bucketBy?: string, attr = 'targetingKey') => {
    const env = compileEnvironment([boolFlag('rollout', [rule('r', [], split(weights, bucketBy))])], []);
    return keys.map((k) => env.evaluate('rollout', { [attr]: k })!.variant);
  };
  it('keeps everyone who had the first variant when its weight grows (10,000 keys)', () => {
    const before = served([
      ['on', 20],
      ['off', 80],
    ]);
    const after = served([
      ['on', 30],
      ['off', 70],
    ]);
    const kept = before.every((v, i) => v !== 'on' || after[i] === 'on');
    assert.ok(kept, 'a user lost the variant');
    assert.ok(after.filter((v) => v === 'on').length > before.filter((v) => v === 'on').length);
  });
  it('distributes 25/75 within 2 points over 10,000 keys', () => {
    const on = served([
      ['on', 25],
      ['off', 75],
    ]).filter((v) => v === 'on').length;
    assert.ok(on > 2300 && on < 2700, `${on} of 10000 on`);
  });
  it('buckets by another attribute when bucketBy is set, and serves nothing without it', () => {
    const byOrg = served(
      [
        ['on', 50],
        ['off', 50],
      ],
      'org',
      'org',
    );
    assert.ok(byOrg.every((v) => v !== undefined));
    const env = compileEnvironment(
      [
        boolFlag('rollout', [
          rule(
            'r',
            [],
            split(
              [
                ['on', 50],
                ['off', 50],
              ],
              'org',
            ),
          ),
        ]),
      ],
      [],
    );
    assert.deepEqual(env.evaluate('rollout', { targetingKey: 'u' }), { key: 'rollout', value: false, variant: 'off', reason: 'DEFAULT', metadata: {} });
    const sameOrg = new Set(['a', 'b', 'c'].map((tk) => env.evaluate('rollout', { targetingKey: tk, org: 'o-1' })!.variant));
    assert.equal(sameOrg.size, 1, 'users of one org share a bucket');
  });
});

describe('targeting engine: prerequisites', () => {
  const base = boolFlag('base', [rule('r', [{ attribute: 'beta', operator: 'equals', values: [true] }])]);
  const dependent: TargetedFlag = {
    key: 'dep',
    type: 'string',
    targeting: {
      state: 'ENABLED',
      variants: { a: 'A', b: 'B' },
      defaultVariant: 'a',
      prerequisites: [{ flag: 'base', variants: ['on'] }],
      rules: [rule('r', [], { variant: 'b' })],
    },
  };
  it('serves the rules only when the prerequisite flag serves a listed variant', () => {
    const env = compileEnvironment([base, dependent], []);
    assert.equal(env.evaluate('dep', { beta: true })!.variant, 'b');
    assert.deepEqual(env.evaluate('dep', { beta: false }), { key: 'dep', value: 'A', variant: 'a', reason: 'DEFAULT', metadata: {} });
  });
  it('never holds on a DISABLED prerequisite flag', () => {
    const env = compileEnvironment([{ ...base, targeting: { ...base.targeting, state: 'DISABLED' } }, dependent], []);
    assert.equal(env.evaluate('dep', { beta: true })!.variant, 'a');
  });
  it('follows a change of the prerequisite flag on a rebuild with the previous snapshot', () => {
    const first = compileEnvironment([base, dependent], []);
    const changed = boolFlag('base', [rule('r', [{ attribute: 'beta', operator: 'equals', values: ['yes'] }])]);
    const second = compileEnvironment([changed, dependent], [], { previous: first });
    assert.equal(second.evaluate('dep', { beta: 'yes' })!.variant, 'b');
    assert.equal(second.evaluate('dep', { beta: true })!.variant, 'a');
  });
  it('follows a change of a segment on a rebuild with the previous snapshot', () => {
    const seg = (v: string): Segment => ({
      key: 's',
      name: 's',
      description: '',
      match: 'all',
      conditions: [{ attribute: 'c', operator: 'equals', values: [v] }],
    });
    const f = boolFlag('f', [rule('r', [], { variant: 'on' }, ['s'])]);
    const first = compileEnvironment([f], [seg('x')]);
    const second = compileEnvironment([f], [seg('y')], { previous: first });
    assert.equal(first.evaluate('f', { c: 'x' })!.value, true);
    assert.equal(second.evaluate('f', { c: 'x' })!.value, false);
    assert.equal(second.evaluate('f', { c: 'y' })!.value, true);
  });
});

describe('targeting engine: bad contexts never throw', () => {
  const env = compileEnvironment([boolFlag('t', [rule('r', [{ attribute: 'email', operator: 'matches', values: ['^a'] }])]), boolFlag('s', [])], []);
  let deep: Record<string, unknown> = {};
  for (let i = 0; i < 50; i++) deep = { d: deep };
  const wide = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]));
  const rows: Array<[string, unknown]> = [
    ['a string', 'ctx'],
    ['an array', [1, 2]],
    ['a number', 42],
    ['deep nesting', deep],
    ['a huge string', { email: 'a'.repeat(100_000) }],
    ['too many values', wide],
    ['a non-string targetingKey', { targetingKey: { id: 1 } }],
  ];
  for (const [name, context] of rows) {
    it(`answers INVALID_CONTEXT for ${name}, and static flags as usual`, () => {
      const e = env.evaluate('t', context)!;
      assert.equal(e.reason, 'ERROR');
      assert.equal(e.errorCode, 'INVALID_CONTEXT');
      assert.equal(env.evaluate('s', context)!.reason, 'STATIC');
      assert.deepEqual(
        env.evaluateAll(context).map((x) => x.key),
        ['s'],
      );
    });
  }
  it('answers ERROR (GENERAL) as flagd does when an attribute cannot be compared (a word where a number is compared)', () => {
    const n = compileEnvironment([boolFlag('n', [rule('r', [{ attribute: 'age', operator: 'lt', values: [18] }])])], []);
    assert.equal(n.evaluate('n', { age: 'old' })!.errorCode, 'GENERAL');
    assert.equal(n.evaluate('n', { age: '17' })!.value, true);
  });
  it('answers ERROR instead of throwing for imported JSON Logic flagd-core cannot build', () => {
    const broken: TargetedFlag = {
      key: 'j',
      type: 'string',
      targeting: { state: 'ENABLED', variants: { a: 'A' }, defaultVariant: 'zz', prerequisites: [], rules: [], jsonLogic: { if: [true, 'a', null] } },
    };
    assert.equal(compileEnvironment([broken], []).evaluate('j', {})!.errorCode, 'GENERAL');
  });
  it('ignores prototype keys and does not pollute Object.prototype', () => {
    const hostile = JSON.parse('{"__proto__": {"email": "admin"}, "constructor": {"prototype": {"polluted": 1}}}');
    assert.equal(env.evaluate('t', hostile)!.reason, 'DEFAULT');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
  it('answers a context handed over from JSON.parse (parsed) exactly as a copied one, and never changes it', () => {
    const texts = [
      ...rows.map(([, context]) => JSON.stringify(context)),
      '{"__proto__": {"email": "admin"}, "constructor": {"prototype": {"polluted": 1}}}',
      '{"email": "ann", "$flagpost": {"x": true}, "nested": {"$flagd": {"timestamp": 1}}}',
      '{"email": "ann", "targetingKey": "u-1", "list": [1, "a", null, {"b": [true]}]}',
      '{"email": "a", "n": {"__proto__": 1}}',
    ];
    for (const text of texts) {
      const handed = JSON.parse(text) as unknown;
      for (const key of ['t', 's']) assert.deepEqual(env.evaluate(key, JSON.parse(text), { parsed: true }), env.evaluate(key, JSON.parse(text)), text);
      const prepared = env.prepare(handed, { parsed: true });
      const copied = env.prepare(JSON.parse(text));
      assert.equal(prepared.problem, copied.problem, text);
      if (prepared.evaluate) assert.deepEqual(prepared.evaluate('t'), copied.evaluate!('t'), text);
      // Dropped keys are left out of a copy, never deleted from the caller's value.
      assert.deepEqual(handed, JSON.parse(text), text);
    }
  });
  it('does not let a caller set extension results under $flagpost or flagd values under $flagd', () => {
    const forged = { $flagpost: new Proxy({}, { get: () => true }), email: 'zed' };
    assert.equal(env.evaluate('t', forged)!.reason, 'DEFAULT');
    const ts = compileEnvironment([boolFlag('late', [rule('r', [{ attribute: '$flagd.timestamp', operator: 'after', values: ['2999-01-01'] }])])], []);
    assert.equal(ts.evaluate('late', { $flagd: { timestamp: 4e10 } })!.reason, 'DEFAULT');
  });
});

describe('targeting engine: what flags have in common is evaluated once per context', () => {
  // Flags that share segments and conditions (compiled once, evaluated once per prepared context) must
  // answer for every context exactly what each answers compiled alone, however evaluations interleave.
  const segments: Segment[] = [
    { key: 'beta', name: 'Beta', description: '', match: 'all', conditions: [{ attribute: 'plan', operator: 'in', values: ['pro', 'team'] }] },
    {
      key: 'staff',
      name: 'Staff',
      description: '',
      match: 'any',
      conditions: [
        { attribute: 'email', operator: 'endsWith', values: ['@corp.com'] },
        { attribute: 'ip', operator: 'inCidr', values: ['10.0.0.0/8'] },
      ],
    },
  ];
  const eu: Condition = { attribute: 'country', operator: 'in', values: ['DE', 'FR'] };
  const app: Condition = { attribute: 'app.version', operator: 'semverGte', values: ['2.0.0'] };
  const flags = Array.from({ length: 12 }, (_, i) =>
    boolFlag(`f${i}`, [
      rule(`a${i}`, i % 3 === 0 ? [eu, app] : [eu], { variant: 'on' }, i % 2 === 0 ? ['beta'] : ['staff']),
      rule(
        `b${i}`,
        [{ attribute: 'device', operator: 'equals', values: ['mobile'] }],
        split([
          ['on', 30 + i],
          ['off', 70],
        ]),
      ),
      rule(
        `c${i}`,
        [app],
        split(
          [
            ['on', 10],
            ['off', 90],
          ],
          i % 4 === 0 ? 'company' : undefined,
        ),
        i % 5 === 0 ? ['staff'] : [],
      ),
    ]),
  );
  const env = compileEnvironment(flags, segments, { now: () => NOW });
  const alone = new Map(flags.map((f) => [f.key, compileEnvironment([f], segments, { now: () => NOW })]));
  const pick = <T>(xs: T[], n: number) => xs[n % xs.length]!;
  const contextOf = (n: number): Record<string, unknown> => ({
    targetingKey: `user-${n}`,
    ...(n % 7 === 0 ? {} : { country: pick(['DE', 'FR', 'US'], n) }),
    plan: pick(['pro', 'free', 'team'], n >> 2),
    email: pick(['a@corp.com', 'b@example.com'], n >> 3),
    ip: pick(['10.1.2.3', '192.168.0.1', 'nope'], n >> 1),
    device: pick(['mobile', 'desktop'], n >> 4),
    app: { version: pick(['2.3.1', '1.9.0', 'x'], n >> 5) },
    company: pick(['Acme', 'Initech'], n),
  });

  it('answers each flag as compiled alone, for contexts evaluated one after the other and interleaved', () => {
    for (let n = 0; n < 300; n += 2) {
      const [a, b] = [contextOf(n), contextOf(n + 1)];
      const pa = env.prepare(a);
      const pb = env.prepare(b);
      for (const f of flags) {
        // Interleaved: every shared subtree is asked for two contexts in turn.
        assert.deepEqual(pa.evaluate!(f.key), alone.get(f.key)!.evaluate(f.key, a), `${f.key} ${JSON.stringify(a)}`);
        assert.deepEqual(pb.evaluate!(f.key), alone.get(f.key)!.evaluate(f.key, b), `${f.key} ${JSON.stringify(b)}`);
        assert.deepEqual(env.evaluate(f.key, b), alone.get(f.key)!.evaluate(f.key, b));
      }
      assert.deepEqual(
        env.evaluateAll(a),
        flags.map((f) => alone.get(f.key)!.evaluate(f.key, a)!).filter((e) => e.value !== undefined),
      );
    }
  });
});
