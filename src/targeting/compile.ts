import { conditionLogic, isExtension } from './conditions.ts';
import type { Condition, Segment, Split, TargetedFlag, VariantValue } from './targeting.ts';

// The typed model compiled to flagd's JSON Logic. One compiler serves two readers:
// - the flagd export (toFlagdDefinition): variant names as they are, segments as `$evaluators`
//   entries referenced with `{"$ref": key}`;
// - Flagpost's own evaluator (engine.ts): segments inlined (what flagd does with `$ref`), and, when
//   `encode` is set, every variant a rule serves renamed `r<index>:<variant>` (the default
//   `d:<variant>`), so that one flagd evaluation also tells which rule matched. Values and
//   bucketing are the same; the differential test holds the two to the same answers.

/** The flags and segments of one environment, by key. */
export interface EnvironmentIndex {
  flags: ReadonlyMap<string, TargetedFlag>;
  segments: ReadonlyMap<string, Segment>;
}

export interface LogicOptions {
  /** Rename served variants so that the rule that matched can be read back from the variant. */
  encode: boolean;
  /** Segments as `{"$ref": key}` (export) instead of inlined (evaluation). */
  refSegments: boolean;
  /** Bucket with this literal flag key instead of `$flagd.flagKey` (a prerequisite inlined into another flag). */
  flagKeyLiteral?: string;
}

/** The name a rule's served variant gets in the evaluator's own compiled flag. */
export const encodedVariant = (ruleIndex: number, variant: string): string => `r${ruleIndex}:${variant}`;
/** The name the default variant gets in the evaluator's own compiled flag. */
export const encodedDefault = (variant: string): string => `d:${variant}`;

export function buildIndex(flags: readonly TargetedFlag[], segments: readonly Segment[]): EnvironmentIndex {
  return { flags: new Map(flags.map((f) => [f.key, f])), segments: new Map(segments.map((s) => [s.key, s])) };
}

/** A segment's JSON Logic: `{"and": [...]}` for `all`, `{"or": [...]}` for `any` (its `$evaluators` entry). */
export function segmentLogic(segment: Segment): unknown {
  return { [segment.match === 'all' ? 'and' : 'or']: segment.conditions.map(conditionLogic) };
}

export function splitLogic(split: Split, name: (v: string) => string, flagKeyLiteral: string | undefined): unknown {
  const buckets = split.weights.map((w) => [name(w.variant), w.weight]);
  if (split.bucketBy === undefined) {
    if (flagKeyLiteral === undefined) return { fractional: buckets };
    // flagd's default bucket (flagKey + targetingKey), spelled out for a flag evaluated under another key.
    return { if: [{ var: 'targetingKey' }, { fractional: [{ cat: [flagKeyLiteral, { var: 'targetingKey' }] }, ...buckets] }, null] };
  }
  const key = flagKeyLiteral ?? { var: '$flagd.flagKey' };
  return { if: [{ missing: [split.bucketBy] }, null, { fractional: [{ cat: [key, { var: split.bucketBy }] }, ...buckets] }] };
}

/** Replaces `{"$ref": key}` of known segments with their logic (what flagd does with `$evaluators`). */
export function resolveSegmentRefs(logic: unknown, segments: ReadonlyMap<string, Segment>): unknown {
  if (Array.isArray(logic)) return logic.map((item) => resolveSegmentRefs(item, segments));
  if (logic === null || typeof logic !== 'object') return logic;
  const entries = Object.entries(logic);
  if (entries.length === 1 && entries[0]![0] === '$ref' && typeof entries[0]![1] === 'string') {
    const segment = segments.get(entries[0]![1]);
    return segment ? segmentLogic(segment) : logic;
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolveSegmentRefs(v, segments)]));
}

/**
 * The targeting JSON Logic of a flag, or undefined when it has none (a STATIC flag). Disabled rules
 * are left out; rules become one `if` chain (first match wins, else null: the default variant);
 * prerequisites wrap the chain (`{"if": [prerequisites hold, chain, null]}`).
 */
export function targetingLogic(flag: TargetedFlag, env: EnvironmentIndex, options: LogicOptions, depth = 0): unknown {
  const t = flag.targeting;
  if (t.jsonLogic !== undefined) return options.refSegments ? t.jsonLogic : resolveSegmentRefs(t.jsonLogic, env.segments);
  const rules = t.rules.map((rule, index) => ({ rule, index })).filter(({ rule }) => rule.enabled);
  if (rules.length === 0 && t.prerequisites.length === 0) return undefined;
  const chain: unknown[] = [];
  for (const { rule, index } of rules) {
    const name = (v: string) => (options.encode ? encodedVariant(index, v) : v);
    const items: unknown[] = rule.conditions.map(conditionLogic);
    for (const key of rule.segments) {
      const segment = env.segments.get(key);
      items.push(options.refSegments || !segment ? { $ref: key } : segmentLogic(segment));
    }
    chain.push(items.length === 0 ? true : items.length === 1 ? items[0] : { and: items });
    chain.push('variant' in rule.serve ? name(rule.serve.variant) : splitLogic(rule.serve.split, name, options.flagKeyLiteral));
  }
  const rulesLogic = chain.length === 0 ? null : { if: [...chain, null] };
  if (t.prerequisites.length === 0) return rulesLogic;
  const held = t.prerequisites.map((p) => {
    const target = env.flags.get(p.flag);
    const variant = target ? variantLogic(target, env, options, depth + 1) : null;
    if (variant === null || typeof variant === 'string') return variant !== null && p.variants.includes(variant);
    return { in: [variant, p.variants] };
  });
  if (held.includes(false)) return { if: [false, rulesLogic, null] };
  const live = held.filter((h) => h !== true);
  const condition = live.length === 0 ? true : live.length === 1 ? live[0] : { and: live };
  return { if: [condition, rulesLogic, null] };
}

/** JSON Logic that yields the variant a flag serves for the context (its name, or null for none). */
function variantLogic(flag: TargetedFlag, env: EnvironmentIndex, options: LogicOptions, depth: number): unknown {
  const t = flag.targeting;
  if (t.state === 'DISABLED' || depth > 32) return null;
  const inner = targetingLogic(flag, env, { encode: false, refSegments: options.refSegments, flagKeyLiteral: flag.key }, depth);
  if (inner === undefined) return t.defaultVariant;
  return t.defaultVariant === null ? inner : { or: [inner, t.defaultVariant] };
}

/** The extension conditions a flag's evaluation needs: its rules', its segments' and its prerequisites'. */
export function extensionConditions(flag: TargetedFlag, env: EnvironmentIndex, seen = new Set<string>()): Condition[] {
  if (seen.has(flag.key)) return [];
  seen.add(flag.key);
  const t = flag.targeting;
  const out: Condition[] = [];
  const usedSegments = new Set<string>();
  for (const rule of t.rules) {
    if (!rule.enabled) continue;
    out.push(...rule.conditions.filter(isExtension));
    for (const key of rule.segments) usedSegments.add(key);
  }
  if (t.jsonLogic !== undefined) collectRefs(t.jsonLogic, usedSegments);
  for (const key of usedSegments) out.push(...(env.segments.get(key)?.conditions.filter(isExtension) ?? []));
  for (const p of t.prerequisites) {
    const target = env.flags.get(p.flag);
    if (target && target.targeting.state === 'ENABLED') out.push(...extensionConditions(target, env, seen));
  }
  return out;
}

/** The segment keys a JSON Logic references with `$ref`. */
export function collectRefs(logic: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(logic)) for (const item of logic) collectRefs(item, into);
  else if (logic !== null && typeof logic === 'object') {
    for (const [k, v] of Object.entries(logic)) {
      if (k === '$ref' && typeof v === 'string') into.add(v);
      else collectRefs(v, into);
    }
  }
  return into;
}

/** A flag's variants under the evaluator's encoded names (see encodedVariant). */
export function encodedVariants(flag: TargetedFlag): Record<string, VariantValue> {
  const t = flag.targeting;
  const out: Record<string, VariantValue> = {};
  if (t.defaultVariant !== null && t.variants[t.defaultVariant] !== undefined) out[encodedDefault(t.defaultVariant)] = t.variants[t.defaultVariant]!;
  t.rules.forEach((rule, index) => {
    if (!rule.enabled) return;
    const served = 'variant' in rule.serve ? [rule.serve.variant] : rule.serve.split.weights.map((w) => w.variant);
    for (const v of served) if (t.variants[v] !== undefined) out[encodedVariant(index, v)] = t.variants[v]!;
  });
  return out;
}
