import type { EvaluationContext } from '@openfeature/core';
import { FeatureFlag } from '@openfeature/flagd-core';
import { buildIndex, splitLogic } from './compile.ts';
import { compileExtension, conditionLogic, EXTENSION_KEY, extensionName, isExtension } from './conditions.ts';
import { prepareContext } from './context.ts';
import { compileEnvironment, type CompileOptions } from './engine.ts';
import type { Condition, Evaluation, Segment, Split, TargetedFlag } from './targeting.ts';

// Why a flag answered what it did, for the playground. Every piece is evaluated with the machinery
// evaluation uses: each condition as its own tiny flagd flag (`{"if": [condition, "t", "f"]}`) with
// the same prepared context and extension results, the split's bucket found by asking flagd's own
// `fractional` (a binary search over a two-way split), prerequisites by evaluating the other flag.
// So an explanation cannot disagree with the answer.

export interface ConditionResult {
  condition: Condition;
  held: boolean;
}

export interface SegmentResult {
  key: string;
  /** False for an unknown segment. */
  held: boolean;
  conditions: ConditionResult[];
}

export interface SplitResult {
  /** The attribute that bucketed (`targetingKey` by default). */
  bucketBy: string;
  totalWeight: number;
  /** 0 <= bucket < totalWeight; absent when the attribute is missing (the split serves no variant). */
  bucket?: number;
  variant?: string;
}

export interface RuleExplanation {
  id: string;
  name: string;
  enabled: boolean;
  /** Whether every condition and segment held; false for a switched-off rule. */
  held: boolean;
  conditions: ConditionResult[];
  segments: SegmentResult[];
  split?: SplitResult;
}

export interface PrerequisiteResult {
  flag: string;
  variants: string[];
  /** The variant the prerequisite flag served, if any. */
  variant?: string;
  held: boolean;
}

export interface Explanation {
  evaluation: Evaluation;
  /** The rule that served, when a rule did. */
  matchedRuleId?: string;
  prerequisites: PrerequisiteResult[];
  rules: RuleExplanation[];
  /** Imported JSON Logic cannot be explained rule by rule: the evaluation alone is given. */
  jsonLogic: boolean;
}

const silent = { error() {}, warn() {}, info() {}, debug() {} };
const probes = new Map<string, FeatureFlag>();

/** Evaluates one JSON Logic expression as flagd would inside a flag with this key; returns the variant name. */
function probe(flagKey: string, logic: unknown, variants: string[], context: Record<string, unknown>): string | undefined {
  const id = flagKey + '\n' + JSON.stringify(logic);
  let flag = probes.get(id);
  if (!flag) {
    const targeting = logic as string;
    flag = new FeatureFlag(flagKey, { state: 'ENABLED', variants: Object.fromEntries(variants.map((v) => [v, v])), defaultVariant: '', targeting }, silent);
    if (probes.size >= 2000) probes.delete(probes.keys().next().value!);
    probes.set(id, flag);
  }
  return flag.evaluate(context as EvaluationContext, silent).variant;
}

/**
 * Explains one flag's evaluation for a context; undefined when the key is unknown. Conditions of
 * every rule are evaluated (not only up to the match), so the playground shows what failed where.
 */
export function explain(
  flags: readonly TargetedFlag[],
  segments: readonly Segment[],
  key: string,
  context: unknown,
  options: CompileOptions = {},
): Explanation | undefined {
  const env = compileEnvironment(flags, segments, options);
  const evaluation = env.evaluate(key, context);
  if (!evaluation) return undefined;
  const index = buildIndex(flags, segments);
  const flag = index.flags.get(key)!;
  const t = flag.targeting;
  const matchedRuleId = typeof evaluation.metadata.ruleId === 'string' ? evaluation.metadata.ruleId : undefined;
  const out: Explanation = { evaluation, matchedRuleId, prerequisites: [], rules: [], jsonLogic: t.jsonLogic !== undefined };
  const prepared = prepareContext(context);
  if (prepared.problem !== undefined || t.jsonLogic !== undefined) return out;
  const nowMs = (options.now ?? Date.now)();
  const holds = (c: Condition): boolean => {
    let ctx = prepared.context;
    if (isExtension(c)) ctx = { ...ctx, [EXTENSION_KEY]: { [extensionName(c)]: compileExtension(c)(ctx, nowMs) } };
    return probe(key, { if: [conditionLogic(c), 't', 'f'] }, ['t', 'f'], ctx) === 't';
  };
  for (const p of t.prerequisites) {
    const variant = env.evaluate(p.flag, context)?.variant;
    out.prerequisites.push({ flag: p.flag, variants: p.variants, variant, held: variant !== undefined && p.variants.includes(variant) });
  }
  for (const rule of t.rules) {
    const conditions = rule.conditions.map((condition) => ({ condition, held: rule.enabled && holds(condition) }));
    const segmentResults = rule.segments.map((segKey) => {
      const segment = index.segments.get(segKey);
      const results = (segment?.conditions ?? []).map((condition) => ({ condition, held: rule.enabled && holds(condition) }));
      const held = segment !== undefined && (segment.match === 'all' ? results.every((r) => r.held) : results.some((r) => r.held));
      return { key: segKey, held, conditions: results };
    });
    const held = rule.enabled && conditions.every((c) => c.held) && segmentResults.every((s) => s.held);
    const explanation: RuleExplanation = { id: rule.id, name: rule.name, enabled: rule.enabled, held, conditions, segments: segmentResults };
    if ('split' in rule.serve) explanation.split = splitResult(key, rule.serve.split, prepared.context);
    out.rules.push(explanation);
  }
  return out;
}

/** The bucket of a split for a context, found with flagd's own fractional: bucket < k iff a [k, total-k] split says "lo". */
function splitResult(flagKey: string, split: Split, context: Record<string, unknown>): SplitResult {
  const totalWeight = split.weights.reduce((sum, w) => sum + w.weight, 0);
  const result: SplitResult = { bucketBy: split.bucketBy ?? 'targetingKey', totalWeight };
  const below = (k: number) =>
    probe(
      flagKey,
      splitLogic(
        {
          ...split,
          weights: [
            { variant: 'lo', weight: k },
            { variant: 'hi', weight: totalWeight - k },
          ],
        },
        (v) => v,
        undefined,
      ),
      ['lo', 'hi'],
      context,
    );
  if (below(totalWeight) !== 'lo') return result;
  let lo = 1;
  let hi = totalWeight;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (below(mid) === 'lo') hi = mid;
    else lo = mid + 1;
  }
  result.bucket = lo - 1;
  let sum = 0;
  for (const w of split.weights) {
    sum += w.weight;
    if (sum > result.bucket) {
      result.variant = w.variant;
      break;
    }
  }
  return result;
}
