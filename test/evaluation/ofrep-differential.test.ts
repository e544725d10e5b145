import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import type { EvaluationContext, FlagValueType } from '@openfeature/core';
import { FlagdCore } from '@openfeature/flagd-core';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

// Differential (issue 18): random contexts evaluated by Flagpost's OFREP (bulk and single, over HTTP)
// and by a plain @openfeature/flagd-core loaded with Flagpost's own export (GET .../flagd) give the same
// value, variant and reason, up to Flagpost's one refinement (SPLIT where flagd says TARGETING_MATCH for
// a rule that serves a split). Seeded: a failure names the context.

function prng(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { int: (n: number) => Math.floor(next() * n), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!, chance: (p: number) => next() < p };
}

const COUNTRIES = ['fr', 'de', 'us', 'jp'];
const PLANS = ['free', 'pro', 'team'];
const VERSIONS = ['1.0.0', '1.2.3', '2.0.0', '2.5.1', '10.1.0'];
const EMAILS = ['ann@corp.com', 'bob@example.org', 'admin@corp.com'];

type Rng = ReturnType<typeof prng>;

function condition(r: Rng) {
  const negate = r.chance(0.2) ? { negate: true } : {};
  switch (r.int(6)) {
    case 0:
      return { attribute: 'country', operator: 'in', values: COUNTRIES.filter(() => r.chance(0.5)).concat('xx'), ...negate };
    case 1:
      return { attribute: 'plan', operator: 'equals', values: [r.pick(PLANS)], ...negate };
    case 2:
      return { attribute: 'email', operator: 'endsWith', values: ['@corp.com'], ...negate };
    case 3:
      return { attribute: 'app.version', operator: r.pick(['semverGte', 'semverLt']), values: [r.pick(VERSIONS)], ...negate };
    case 4:
      return { attribute: 'age', operator: r.pick(['gt', 'lte']), values: [r.int(60)], ...negate };
    default:
      return { attribute: 'email', operator: 'startsWith', values: ['admin'], ...negate };
  }
}

function context(r: Rng): Record<string, unknown> {
  const ctx: Record<string, unknown> = {};
  if (r.chance(0.9)) ctx.targetingKey = `user-${r.int(1000)}`;
  if (r.chance(0.8)) ctx.country = r.pick(COUNTRIES);
  if (r.chance(0.8)) ctx.plan = r.pick(PLANS);
  if (r.chance(0.7)) ctx.email = r.pick(EMAILS);
  if (r.chance(0.7)) ctx.app = { version: r.pick(VERSIONS) };
  if (r.chance(0.6)) ctx.age = r.int(80);
  return ctx;
}

interface OfrepFlag {
  key: string;
  value?: unknown;
  variant?: string;
  reason?: string;
  errorCode?: string;
  metadata?: Record<string, unknown>;
}

const silent = { error() {}, warn() {}, info() {}, debug() {} };

forEachDialect('differential: Flagpost OFREP vs flagd-core on Flagpost export', (ctx) => {
  let project: ProjectFixture;
  const flags: Array<{ slug: string; type: FlagValueType; splitRules: Set<string> }> = [];
  const core = new FlagdCore(undefined, silent);

  before(async () => {
    project = await createProject(ctx());
    const env = project.environments[0]!.key;
    const r = prng(18);
    await ctx().admin('POST', `/admin/v1/projects/${project.key}/segments`, {
      key: 'corp',
      name: 'Corp',
      match: 'any',
      conditions: [condition(r), condition(r)],
    });
    for (let i = 0; i < 10; i++) {
      const type = r.pick(['boolean', 'string', 'number'] as const);
      const names = type === 'boolean' ? ['on', 'off'] : ['v0', 'v1', 'v2'];
      const variants = Object.fromEntries(names.map((n, j) => [n, type === 'boolean' ? n === 'on' : type === 'string' ? `value-${j}` : j * 10]));
      const slug = `flag-${i}`;
      await createFlag(ctx(), project.key, type === 'boolean' ? { slug } : { slug, type, variants, defaultVariant: 'v0' });
      const splitRules = new Set<string>();
      const rules = Array.from({ length: 1 + r.int(3) }, (_, j) => {
        const id = `r${j}`;
        const split = r.chance(0.4);
        if (split) splitRules.add(id);
        return {
          id,
          conditions: Array.from({ length: r.int(3) }, () => condition(r)),
          segments: r.chance(0.3) ? ['corp'] : [],
          serve: split ? { split: { weights: names.map((variant) => ({ variant, weight: 1 + r.int(50) })) } } : { variant: r.pick(names) },
        };
      });
      const res = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env}/flags/${slug}`, {
        state: 'ENABLED',
        defaultVariant: r.chance(0.1) ? null : names[0],
        rules,
      });
      assert.equal(res.statusCode, 200, res.body);
      flags.push({ slug, type, splitRules });
    }
    const exported = await ctx().admin('GET', `/admin/v1/projects/${project.key}/environments/${env}/flagd`);
    assert.equal(exported.statusCode, 200, exported.body);
    core.setConfigurations(exported.body);
  });

  it('agrees on value, variant and reason for 150 random contexts, bulk and single', async () => {
    const r = prng(26);
    let compared = 0;
    const reasons = new Set<string>();
    for (let n = 0; n < 150; n++) {
      const c = context(r);
      const res = await ctx().app.inject({
        method: 'POST',
        url: '/ofrep/v1/evaluate/flags',
        headers: { ...keys(project), 'content-type': 'application/json' },
        payload: JSON.stringify({ context: c }),
      });
      assert.equal(res.statusCode, 200, res.body);
      const byKey = new Map((res.json().flags as OfrepFlag[]).map((f) => [f.key, f]));
      for (const flag of flags) {
        const mine = byKey.get(flag.slug)!;
        const theirs = core.resolve(flag.type, flag.slug, undefined as never, c as EvaluationContext, silent);
        const where = `${flag.slug}, context ${JSON.stringify(c)}: ${JSON.stringify(mine)} vs ${JSON.stringify(theirs)}`;
        const theirValue = theirs.reason === 'ERROR' || theirs.reason === 'DISABLED' ? undefined : theirs.value;
        assert.deepEqual(mine.value, theirValue, `value: ${where}`);
        if (theirValue !== undefined) assert.equal(mine.variant, theirs.variant, `variant: ${where}`);
        const split = theirs.reason === 'TARGETING_MATCH' && flag.splitRules.has(String(mine.metadata?.ruleId));
        assert.equal(mine.reason, split ? 'SPLIT' : theirs.reason, `reason: ${where}`);
        if (n % 10 === 0) {
          const single = await ctx().app.inject({
            method: 'POST',
            url: `/ofrep/v1/evaluate/flags/${flag.slug}`,
            headers: { ...keys(project), 'content-type': 'application/json' },
            payload: JSON.stringify({ context: c }),
          });
          assert.deepEqual(single.json(), mine, `single = bulk: ${where}`);
        }
        reasons.add(mine.reason!);
        compared++;
      }
    }
    assert.equal(compared, 1500);
    for (const reason of ['TARGETING_MATCH', 'SPLIT', 'DEFAULT']) assert.ok(reasons.has(reason), `${reason} among ${[...reasons].join(', ')}`);
  });
});
