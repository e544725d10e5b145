import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagdCore } from '@openfeature/flagd-core';
import type { EvaluationContext } from '@openfeature/core';
import { compileEnvironment } from './engine.ts';
import { toFlagdDefinition } from './flagd-export.ts';
import { CURRENT_BUCKETING, type Condition, type FlagType, type Rule, type Segment, type TargetedFlag, type VariantValue } from './targeting.ts';
import { environmentProblem } from './validate.ts';

// Random typed environments (rules, segments, splits, prerequisites; flagd-expressible operators
// only) and random contexts: Flagpost's engine and a plain FlagdCore loaded with Flagpost's own
// export must give the same value and variant, and the same reason up to Flagpost's one refinement
// (SPLIT where flagd says TARGETING_MATCH for a rule serving a split). Seeded: a failure names its
// seed and reproduces.

function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  const chance = (p: number) => next() < p;
  return { int, pick, chance };
}
type Rng = ReturnType<typeof prng>;

const COUNTRIES = ['fr', 'de', 'us', 'jp', 'FR'];
const PLANS = ['free', 'pro', 'team'];
const VERSIONS = ['1.0.0', '1.2.3', '2.0.0', '2.0.0-rc.1', '10.1.0', 'v2.1.0', '3'];
const EMAILS = ['ann@corp.com', 'bob@example.org', 'admin@corp.com', 'zed@x.io'];

function condition(r: Rng): Condition {
  const negate = r.chance(0.2) ? { negate: true } : {};
  switch (r.int(9)) {
    case 0:
      return { attribute: 'country', operator: 'equals', values: r.chance(0.5) ? [r.pick(COUNTRIES)] : [r.pick(COUNTRIES), r.pick(COUNTRIES)], ...negate };
    case 1:
      return { attribute: r.pick(['plan', 'org.plan']), operator: 'in', values: [r.pick(PLANS), r.pick(PLANS)], ...negate };
    case 2:
      return {
        attribute: 'email',
        operator: r.pick(['startsWith', 'endsWith', 'contains'] as const),
        values: [r.pick(['admin', '@corp.com', 'o', 'x.io'])],
        ...negate,
      };
    case 3:
      return { attribute: 'age', operator: r.pick(['lt', 'lte', 'gt', 'gte'] as const), values: [r.int(60)], ...negate };
    case 4:
      return {
        attribute: 'version',
        operator: r.pick(['semverEq', 'semverLt', 'semverLte', 'semverGt', 'semverGte', 'semverCaret', 'semverTilde'] as const),
        values: [r.pick(['1.0.0', '2.0.0', '1.2.0'])],
        ...negate,
      };
    case 5:
      return { attribute: r.pick(['beta', 'org.id', 'age']), operator: 'exists', values: [], ...negate };
    case 6:
      return { attribute: 'beta', operator: 'equals', values: [true], ...negate };
    case 7:
      return {
        attribute: '$flagd.timestamp',
        operator: r.pick(['before', 'after'] as const),
        values: [r.pick(['2020-01-01', '2999-12-31T00:00:00Z'])],
        ...negate,
      };
    default:
      return { attribute: 'roles', operator: 'contains', values: [r.pick(['admin', 'dev'])], ...negate };
  }
}

const VARIANTS: Record<Exclude<FlagType, 'boolean' | 'object'>, () => VariantValue> = { string: () => 'v', number: () => 0 };

function environment(r: Rng): { flags: TargetedFlag[]; segments: Segment[] } {
  const segments: Segment[] = Array.from({ length: r.int(4) }, (_, i) => ({
    key: `seg-${i}`,
    name: `Segment ${i}`,
    description: '',
    match: r.pick(['all', 'any'] as const),
    conditions: Array.from({ length: 1 + r.int(3) }, () => condition(r)),
  }));
  const flags: TargetedFlag[] = [];
  const count = 3 + r.int(6);
  for (let f = 0; f < count; f++) {
    const type = r.pick(['boolean', 'string', 'number', 'object'] as const);
    const names = type === 'boolean' ? ['on', 'off'] : Array.from({ length: 2 + r.int(3) }, (_, i) => `v${i}`);
    const variants = Object.fromEntries(
      names.map((n, i) => [n, type === 'boolean' ? n === 'on' : type === 'object' ? { i } : type === 'string' ? `${VARIANTS.string()}${i}` : i * 10]),
    );
    const rules: Rule[] = Array.from({ length: r.int(5) }, (_, i) => {
      const weights = names.filter(() => r.chance(0.7)).map((variant) => ({ variant, weight: r.int(100) }));
      const serve: Rule['serve'] =
        weights.length > 0 && weights.some((w) => w.weight > 0) && r.chance(0.4)
          ? { split: { bucketing: CURRENT_BUCKETING, ...(r.chance(0.3) ? { bucketBy: r.pick(['org.id', 'email']) } : {}), weights } }
          : { variant: r.pick(names) };
      return {
        id: `r${i}`,
        name: `Rule ${i}`,
        enabled: r.chance(0.9),
        conditions: Array.from({ length: r.int(3) }, () => condition(r)),
        segments: segments.filter(() => r.chance(0.2)).map((s) => s.key),
        serve,
      };
    });
    const prerequisites =
      flags.length > 0 && r.chance(0.3)
        ? [flags[r.int(flags.length)]!]
            .map((p) => ({ flag: p.key, variants: Object.keys(p.targeting.variants).filter(() => r.chance(0.5)) }))
            .filter((p) => p.variants.length > 0)
        : [];
    flags.push({
      key: `flag-${f}`,
      type,
      targeting: { state: r.chance(0.1) ? 'DISABLED' : 'ENABLED', variants, defaultVariant: r.chance(0.1) ? null : r.pick(names), prerequisites, rules },
    });
  }
  return { flags, segments };
}

function context(r: Rng): Record<string, unknown> {
  const ctx: Record<string, unknown> = {};
  if (r.chance(0.9)) ctx.targetingKey = `user-${r.int(1000)}`;
  if (r.chance(0.8)) ctx.country = r.pick(COUNTRIES);
  if (r.chance(0.6)) ctx.plan = r.pick(PLANS);
  if (r.chance(0.7)) ctx.age = r.chance(0.9) ? r.int(70) : null;
  if (r.chance(0.7)) ctx.version = r.pick(VERSIONS);
  if (r.chance(0.7)) ctx.email = r.pick(EMAILS);
  if (r.chance(0.5)) ctx.beta = r.pick([true, false, 0, '']);
  if (r.chance(0.5)) ctx.org = { id: `org-${r.int(20)}`, plan: r.pick(PLANS) };
  if (r.chance(0.4)) ctx.roles = r.chance(0.5) ? ['dev', 'admin'].filter(() => r.chance(0.5)) : r.pick(['admin', 'developer']);
  return ctx;
}

/** Values of the wrong type or shape for every attribute: numbers as strings, null, booleans as strings, huge numbers, unicode. */
const WILD: unknown[] = [
  null,
  '',
  '0',
  '31',
  31,
  -5,
  1e308,
  -1e308,
  2 ** 53 + 2,
  0.5,
  'true',
  true,
  false,
  'v2.1.0',
  'V1',
  '1.2',
  'ünï@corp.com',
  '😀',
  [],
  ['admin'],
  {},
  { id: 'org-1' },
];

function wildContext(r: Rng): Record<string, unknown> {
  const ctx = context(r);
  for (const attribute of ['targetingKey', 'country', 'plan', 'age', 'version', 'email', 'beta', 'org', 'roles']) {
    if (!r.chance(0.3)) continue;
    if (attribute === 'targetingKey') ctx.targetingKey = r.pick(['', 'ü😀', `user-${r.int(1000)}`, '\u0000x']);
    else ctx[attribute] = r.pick(WILD);
  }
  return ctx;
}

const silent = { error() {}, warn() {}, info() {}, debug() {} };

describe('differential: Flagpost engine vs flagd-core on Flagpost export', () => {
  for (let seed = 1; seed <= 80; seed++) {
    // Seeds above 40 also send values of the wrong type for every attribute.
    const draw = seed > 40 ? wildContext : context;
    it(`agrees on value, variant and reason (seed ${seed})`, () => {
      const r = prng(seed);
      const { flags, segments } = environment(r);
      assert.equal(environmentProblem(flags, segments), undefined, 'the generated environment is valid');
      const ours = compileEnvironment(flags, segments);
      const core = new FlagdCore(undefined, silent);
      core.setConfigurations(JSON.stringify(toFlagdDefinition(flags, segments)));
      for (let n = 0; n < 60; n++) {
        const ctx = draw(r);
        for (const flag of flags) {
          const mine = ours.evaluate(flag.key, ctx)!;
          const theirs = core.resolve(flag.type, flag.key, undefined as never, ctx as EvaluationContext, silent);
          const where = `seed ${seed}, flag ${flag.key}, context ${JSON.stringify(ctx)}`;
          const theirValue = theirs.reason === 'ERROR' || theirs.reason === 'DISABLED' ? undefined : theirs.value;
          assert.deepEqual(mine.value, theirValue, `value: ${where}`);
          assert.equal(mine.variant, theirs.variant, `variant: ${where}`);
          const rule = flag.targeting.rules.find((x) => x.id === mine.metadata.ruleId);
          const expected = theirs.reason === 'TARGETING_MATCH' && rule && 'split' in rule.serve ? 'SPLIT' : theirs.reason;
          assert.equal(mine.reason, expected, `reason: ${where}`);
        }
        const bulk = ours.evaluateAll(ctx).map((e) => [e.key, e.variant]);
        const theirBulk = core.resolveAll(ctx as EvaluationContext, silent).map((e) => [e.flagKey, e.variant]);
        assert.deepEqual(bulk, theirBulk, `bulk: seed ${seed}, context ${JSON.stringify(ctx)}`);
      }
    });
  }
});
