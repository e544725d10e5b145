import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FeatureFlag } from '@openfeature/flagd-core';
import type { EvaluationContext, FlagValue } from '@openfeature/core';
import { compileEnvironment } from './engine.ts';
import { bucketOf, compileLogic } from './logic.ts';
import type { TargetedFlag } from './targeting.ts';

// Flagpost's JSON Logic evaluator (logic.ts) against flagd-core's FeatureFlag on the same logic, for
// the coercions where the two could part: numbers as strings, missing and null attributes, booleans
// against strings, semantic versions with prefixes, huge and negative numbers, unicode bucket keys,
// splits whose total does not divide 2^32, zero weights. Each expression is evaluated three ways —
// raw, as an `if` condition (truthiness) and inside `cat` (its exact value, read back from the
// "variant not found" message) — for every context, through the engine.

const a = { var: 'a' };
const EXPRESSIONS: unknown[] = [
  a,
  { var: 'o.p' },
  { var: 'a.length' },
  { var: ['a', 'fallback'] },
  { var: '$flagd.flagKey' },
  { '===': [a, '1'] },
  { '===': [a, 1] },
  { '!==': [a, null] },
  { '==': [a, 1] },
  { '==': [a, 'true'] },
  { '!=': [a, 0] },
  { '==': ['1', a] },
  { '<': [a, 5] },
  { '<=': [a, 0] },
  { '>': [a, -1] },
  { '>=': [a, '5'] },
  { '<': [a, 1e300] },
  { '>': [a, null] },
  { and: [{ '!==': [a, null] }, { '<': [a, 10] }] },
  { in: [a, ['1', 1, true, 'true', null, 'ünï']] },
  { in: ['1', a] },
  { in: ['x', a] },
  { starts_with: [a, '1'] },
  { ends_with: [a, 'ï'] },
  { '!': a },
  { '!': [a] },
  { or: [a, 'd'] },
  { and: [a, 'd'] },
  { missing: ['a'] },
  { missing: ['o.p', 'a'] },
  { cat: ['k', a] },
  ...['=', '!=', '<', '<=', '>', '>=', '^', '~'].map((op) => ({ sem_ver: [a, op, '1.2.3'] })),
  { sem_ver: [a, '^', 'v1'] },
  { sem_ver: [a, '~', '1.2'] },
  { sem_ver: [a, '?', '1.2.3'] },
  { fractional: [{ cat: ['k', a] }, ['x', 1], ['y', 2], ['z', 4]] },
  { fractional: [{ cat: ['k', a] }, ['x', 0], ['y', 3], ['z', 0]] },
  { fractional: [{ cat: ['k', a] }, ['x', 2147483646], ['y', 1]] },
  { fractional: [{ cat: ['k', a] }, ['x', 2147483647], ['y', 1]] },
  { fractional: [{ cat: ['k', a] }, ['x', -5], ['y', 7]] },
  {
    fractional: [
      ['x', 1],
      ['y', 1],
      ['z', 1],
    ],
  },
  { fractional: [a, ['x', 50], ['y', 50]] },
  { if: [{ missing: ['a'] }, null, { fractional: [{ cat: [{ var: '$flagd.flagKey' }, a] }, ['x', 3], ['y', 5]] }] },
];

const VALUES: unknown[] = [
  undefined,
  null,
  0,
  1,
  -1,
  '1',
  '01',
  '',
  '0',
  'true',
  true,
  false,
  1e308,
  -1e308,
  2 ** 53 + 2,
  1.5,
  '1.2.3',
  'v1.2.3',
  'V2.0',
  '1.2',
  '2.0.0.0',
  '1.2.3-rc.1',
  'ünïcødé',
  '😀x',
  'ünï',
  [],
  [1, '1'],
  ['x'],
  {},
  { p: 1 },
  'abc',
];
const KEYS = [undefined, '', 'user-1', 'ü😀'];

function contexts(): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  VALUES.forEach((value, i) => {
    const ctx: Record<string, unknown> = {};
    if (value !== undefined) ctx.a = value;
    const key = KEYS[i % KEYS.length];
    if (key !== undefined) ctx.targetingKey = key;
    if (i % 3 === 0) ctx.o = { p: value ?? null };
    out.push(ctx);
  });
  return out;
}

const variants = { x: 'X', y: 'Y', z: 'Z', d: 'D', '1': 'one', true: 'T', false: 'F', yes: 'yes', no: 'no', 'X:1': 'x1' };
const wrappers: Array<(e: unknown) => unknown> = [(e) => e, (e) => ({ if: [e, 'yes', 'no'] }), (e) => ({ cat: ['X:', e] })];

const silent = { error() {}, warn() {}, info() {}, debug() {} };

describe('logic.ts against flagd-core', () => {
  it('compiles every expression of the set (none is left to flagd-core) except where json-logic-engine brackets differently', () => {
    for (const e of EXPRESSIONS) {
      for (const w of wrappers) {
        const logic = w(e);
        const [op] = Object.keys(e as object);
        const unbracketed = w === wrappers[2] && (op === 'and' || op === 'or' || op === 'missing');
        assert.equal(compileLogic(logic) === undefined, unbracketed, JSON.stringify(logic));
      }
    }
  });

  it('gives the same reason, variant, value and error for every expression and context', () => {
    const flags: TargetedFlag[] = [];
    const core = new Map<string, FeatureFlag>();
    EXPRESSIONS.forEach((e, i) =>
      wrappers.forEach((w, j) => {
        const key = `f${i}-${j}`;
        const jsonLogic = w(e);
        for (const defaultVariant of ['d', null]) {
          const k = `${key}-${defaultVariant ?? 'none'}`;
          flags.push({ key: k, type: 'string', targeting: { state: 'ENABLED', variants, defaultVariant, prerequisites: [], rules: [], jsonLogic } });
          const definition = { state: 'ENABLED', variants, defaultVariant: defaultVariant as string, targeting: jsonLogic as string };
          core.set(k, new FeatureFlag(k, definition as { state: 'ENABLED'; variants: Record<string, FlagValue>; defaultVariant: string }, silent));
        }
      }),
    );
    const env = compileEnvironment(flags, []);
    let compared = 0;
    for (const ctx of contexts()) {
      for (const flag of flags) {
        const mine = env.evaluate(flag.key, ctx)!;
        const theirs = core.get(flag.key)!.evaluate(structuredClone(ctx) as EvaluationContext, silent);
        const where = `${flag.key} ${JSON.stringify(flag.targeting.jsonLogic)} with ${JSON.stringify(ctx)}`;
        assert.equal(mine.reason, theirs.reason, `reason: ${where}`);
        assert.equal(mine.variant, theirs.variant, `variant: ${where}`);
        assert.deepEqual(mine.value, theirs.reason === 'ERROR' ? undefined : theirs.value, `value: ${where}`);
        assert.equal(mine.errorCode, theirs.errorCode, `errorCode: ${where}`);
        assert.equal(mine.errorDetails, theirs.errorMessage, `error: ${where}`);
        compared++;
      }
    }
    assert.ok(compared > 5000);
  });

  it('computes the bucket exactly for every total, as BigInt maths does', () => {
    const hashes = [0, 1, 2 ** 31, 2 ** 32 - 1, 123456789, 4000000000];
    const totals = [1, 3, 7, 100, 2 ** 21, 2 ** 21 + 1, 1_000_003, 2 ** 31 - 1];
    for (const h of hashes) for (const t of totals) assert.equal(bucketOf(h, t), Number((BigInt(h) * BigInt(t)) >> 32n), `${h} * ${t}`);
  });
});
