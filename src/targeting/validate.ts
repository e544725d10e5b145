import { isIP } from 'node:net';
import { ISO_DATE, TIMESTAMP_ATTRIBUTE } from './conditions.ts';
import * as L from './limits.ts';
import { buildIndex, extensionConditions } from './compile.ts';
import { logicCostProblem, extensionWorkProblem } from './cost.ts';
import { jsonLogicProblem } from './json-logic.ts';
import { regexProblem } from './regex.ts';
import { drain, type Steps } from './slices.ts';
import { CURRENT_BUCKETING, FLAG_TYPES, OPERATORS, type Condition, type FlagType, type Segment, type Split, type TargetedFlag } from './targeting.ts';

// What a flag's targeting, a segment and a whole environment must satisfy before they are stored or
// compiled. Each check answers the first problem with a JSON-path-style location (`/rules/0/conditions/1/values`),
// in document order, so that an API can say exactly what to fix.

export interface TargetingProblem {
  path: string;
  message: string;
}

export interface EnvironmentProblem extends TargetingProblem {
  flagKey?: string;
  segmentKey?: string;
}

const OPERATOR_SET: ReadonlySet<string> = new Set(OPERATORS);
const CASE_OPERATORS = new Set(['equals', 'in', 'startsWith', 'endsWith', 'contains', 'matches']);
const FORBIDDEN_PARTS = new Set(['__proto__', 'constructor', 'prototype']);
/** Segment keys are referenced as `{"$ref": "<key>"}` in flagd definitions: no quotes, no spaces. */
export const SEGMENT_KEY = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
/** flagd's lenient versions: semver 2.0 with an optional `v`, or a partial `1` / `1.2`. */
export const SEMVER =
  /^[vV]?(?:(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?|\d+(?:\.\d+)?)$/;

const problem = (path: string, message: string): TargetingProblem => ({ path, message });
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why a dot path cannot name a context attribute, or undefined. */
export function attributeProblem(attribute: unknown): string | undefined {
  if (typeof attribute !== 'string' || attribute.length === 0) return 'the attribute must be a non-empty string';
  if (attribute.length > L.MAX_ATTRIBUTE_LENGTH) return `the attribute is longer than ${L.MAX_ATTRIBUTE_LENGTH} characters`;
  if (CONTROL.test(attribute)) return 'the attribute contains control characters';
  const parts = attribute.split('.');
  if (parts.length > L.MAX_ATTRIBUTE_PARTS) return `the attribute has more than ${L.MAX_ATTRIBUTE_PARTS} parts`;
  if (parts.some((p) => p.length === 0)) return 'the attribute has an empty part (two dots, or a dot at an end)';
  if (parts.some((p) => FORBIDDEN_PARTS.has(p))) return `the attribute may not use ${[...FORBIDDEN_PARTS].join(', ')}`;
  if (attribute.startsWith('$') && attribute !== TIMESTAMP_ATTRIBUTE)
    return `attributes starting with $ are reserved (only ${TIMESTAMP_ATTRIBUTE}, the evaluation time)`;
  return undefined;
}

/** The first problem of one condition, with a path relative to it (`/values/0`). */
export function conditionProblem(c: Condition): TargetingProblem | undefined {
  if (!isObject(c)) return problem('', 'a condition must be an object');
  const attr = attributeProblem(c.attribute);
  if (attr) return problem('/attribute', attr);
  if (typeof c.operator !== 'string' || !OPERATOR_SET.has(c.operator)) return problem('/operator', `unknown operator; one of ${[...OPERATORS].join(', ')}`);
  if (c.negate !== undefined && typeof c.negate !== 'boolean') return problem('/negate', 'negate must be a boolean');
  if (c.caseInsensitive !== undefined && typeof c.caseInsensitive !== 'boolean') return problem('/caseInsensitive', 'caseInsensitive must be a boolean');
  if (c.caseInsensitive === true && !CASE_OPERATORS.has(c.operator))
    return problem('/caseInsensitive', `caseInsensitive applies to ${[...CASE_OPERATORS].join(', ')}`);
  if (!Array.isArray(c.values)) return problem('/values', 'values must be an array');
  if (c.values.length > L.MAX_VALUES) return problem('/values', `more than ${L.MAX_VALUES} values`);
  for (const [i, v] of c.values.entries()) {
    if (!['string', 'number', 'boolean'].includes(typeof v)) return problem(`/values/${i}`, 'values are strings, numbers or booleans');
    if (typeof v === 'string' && v.length > L.MAX_VALUE_LENGTH) return problem(`/values/${i}`, `longer than ${L.MAX_VALUE_LENGTH} characters`);
    if (typeof v === 'number' && !Number.isFinite(v)) return problem(`/values/${i}`, 'numbers must be finite');
  }
  const timestamp = c.attribute === TIMESTAMP_ATTRIBUTE;
  if (timestamp && c.operator !== 'before' && c.operator !== 'after')
    return problem('/attribute', `${TIMESTAMP_ATTRIBUTE} is only compared with before and after`);
  const one = (check: (v: unknown) => string | undefined): TargetingProblem | undefined => {
    if (c.values.length !== 1) return problem('/values', `${c.operator} takes exactly one value`);
    const message = check(c.values[0]);
    return message ? problem('/values/0', message) : undefined;
  };
  switch (c.operator) {
    case 'equals':
    case 'in':
      return c.values.length === 0 ? problem('/values', `${c.operator} needs at least one value`) : undefined;
    case 'startsWith':
    case 'endsWith':
    case 'contains':
      return one((v) => (typeof v === 'string' ? undefined : 'must be a string'));
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return one((v) => (typeof v === 'number' ? undefined : 'must be a number'));
    case 'before':
    case 'after':
      return one((v) => {
        if (v === 'now') return timestamp ? `${TIMESTAMP_ATTRIBUTE} is always now: compare it with a date` : undefined;
        return typeof v === 'string' && ISO_DATE.test(v) && !Number.isNaN(Date.parse(v))
          ? undefined
          : 'must be an ISO-8601 date (2026-01-31 or 2026-01-31T12:00:00Z) or now';
      });
    case 'exists':
      return c.values.length === 0 ? undefined : problem('/values', 'exists takes no value');
    case 'matches':
      return one((v) => (typeof v === 'string' ? regexProblem(v) : 'must be a string'));
    case 'rollout':
      return rolloutProblem(c.values);
    case 'inCidr':
      if (c.values.length === 0) return problem('/values', 'inCidr needs at least one CIDR');
      for (const [i, v] of c.values.entries()) if (!isCidr(v)) return problem(`/values/${i}`, 'must be a CIDR such as 10.0.0.0/8 or 2001:db8::/32');
      return undefined;
    default:
      return one((v) => (typeof v === 'string' && SEMVER.test(v) ? undefined : 'must be a semantic version such as 1.2.3'));
  }
}

/** `[upTo, groupId, above?, modulus?, seed?]`: integers with 0 <= above <= upTo <= modulus. */
function rolloutProblem(values: Condition['values']): TargetingProblem | undefined {
  if (values.length < 2 || values.length > 5) return problem('/values', 'rollout takes [upTo, groupId] and optionally above, modulus and seed');
  const [upTo, groupId, above = 0, modulus = 100, seed = 0] = values;
  if (typeof groupId !== 'string') return problem('/values/1', 'the group id must be a string');
  if (typeof modulus !== 'number' || !Number.isInteger(modulus) || modulus < 1 || modulus > 2 ** 31)
    return problem('/values/3', 'the modulus must be an integer from 1 to 2^31');
  if (typeof upTo !== 'number' || !Number.isInteger(upTo) || upTo < 0 || upTo > modulus) return problem('/values/0', `must be an integer from 0 to ${modulus}`);
  if (typeof above !== 'number' || !Number.isInteger(above) || above < 0 || above > upTo) return problem('/values/2', `must be an integer from 0 to ${upTo}`);
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 2 ** 32 - 1)
    return problem('/values/4', 'the seed must be an integer from 0 to 2^32-1');
  return undefined;
}

function isCidr(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  const m = /^([^/]+)\/(\d{1,3})$/.exec(v);
  if (!m) return false;
  const family = isIP(m[1]!);
  const bits = Number(m[2]);
  return (family === 4 && bits <= 32) || (family === 6 && bits <= 128);
}

function conditionsProblem(conditions: unknown, path: string, min: number): TargetingProblem | undefined {
  if (!Array.isArray(conditions)) return problem(path, 'conditions must be an array');
  if (conditions.length < min) return problem(path, `needs at least ${min} condition`);
  if (conditions.length > L.MAX_CONDITIONS) return problem(path, `more than ${L.MAX_CONDITIONS} conditions`);
  for (const [i, c] of conditions.entries()) {
    const p = conditionProblem(c as Condition);
    if (p) return problem(`${path}/${i}${p.path}`, p.message);
  }
  const regex = extensionWorkProblem(conditions as Condition[], 'the');
  return regex ? problem(path, regex) : undefined;
}

/** The first problem of a segment (its key, name, match and conditions), or undefined. */
export function segmentProblem(segment: Segment): TargetingProblem | undefined {
  if (!isObject(segment)) return problem('', 'a segment must be an object');
  if (typeof segment.key !== 'string' || !SEGMENT_KEY.test(segment.key))
    return problem('/key', 'a segment key is 1-100 letters, digits, _ . - (starting with a letter or digit)');
  if (typeof segment.name !== 'string' || segment.name.length > L.MAX_NAME_LENGTH)
    return problem('/name', `a name is a string of at most ${L.MAX_NAME_LENGTH} characters`);
  if (typeof segment.description !== 'string' || segment.description.length > 10 * L.MAX_NAME_LENGTH)
    return problem('/description', 'the description is too long');
  if (segment.match !== 'all' && segment.match !== 'any') return problem('/match', 'match is all or any');
  return conditionsProblem(segment.conditions, '/conditions', 1);
}

const VALUE_CHECK: Record<FlagType, (v: unknown) => boolean> = {
  boolean: (v) => typeof v === 'boolean',
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  object: (v) => isObject(v),
};

/** The flags and segments a flag's targeting may reference. */
export interface KnownKeys {
  segments: ReadonlySet<string>;
  flags: ReadonlyMap<string, FlagType>;
}

/**
 * The first problem of a flag's targeting in one environment, or undefined: variants of the flag's
 * type, default and served variants that exist, splits, known segments and prerequisite flags,
 * operators with fitting values, and the limits of limits.ts. Paths are relative to the targeting.
 */
export function targetingProblem(flag: TargetedFlag, known: KnownKeys): TargetingProblem | undefined {
  if (!FLAG_TYPES.includes(flag.type)) return problem('/type', `the type is one of ${FLAG_TYPES.join(', ')}`);
  const t = flag.targeting;
  if (!isObject(t)) return problem('', 'the targeting must be an object');
  if (t.state !== 'ENABLED' && t.state !== 'DISABLED') return problem('/state', 'state is ENABLED or DISABLED');
  if (!isObject(t.variants)) return problem('/variants', 'variants must be an object');
  const names = Object.keys(t.variants);
  if (names.length === 0) return problem('/variants', 'a flag needs at least one variant');
  if (names.length > L.MAX_VARIANTS) return problem('/variants', `more than ${L.MAX_VARIANTS} variants`);
  for (const name of names) {
    if (name.length > L.MAX_VARIANT_NAME_LENGTH || CONTROL.test(name))
      return problem(`/variants/${name}`, `a variant name is 1-${L.MAX_VARIANT_NAME_LENGTH} characters without control characters`);
    if (!VALUE_CHECK[flag.type](t.variants[name]))
      return problem(`/variants/${name}`, `the value must be a ${flag.type === 'object' ? 'JSON object' : flag.type}`);
  }
  const exists = (v: unknown) => typeof v === 'string' && Object.prototype.hasOwnProperty.call(t.variants, v);
  if (t.defaultVariant !== null && !exists(t.defaultVariant)) return problem('/defaultVariant', 'the default variant must be one of the variants, or null');
  if (t.metadata !== undefined) {
    if (!isObject(t.metadata)) return problem('/metadata', 'metadata must be an object');
    for (const [k, v] of Object.entries(t.metadata)) {
      if (!['string', 'number', 'boolean'].includes(typeof v)) return problem(`/metadata/${k}`, 'metadata values are strings, numbers or booleans');
    }
  }
  if (!Array.isArray(t.rules)) return problem('/rules', 'rules must be an array');
  if (!Array.isArray(t.prerequisites)) return problem('/prerequisites', 'prerequisites must be an array');
  if (t.jsonLogic !== undefined) {
    if (t.rules.length > 0 || t.prerequisites.length > 0) return problem('/jsonLogic', 'a flag has either JSON Logic or rules and prerequisites, not both');
    if (!isObject(t.jsonLogic)) return problem('/jsonLogic', 'JSON Logic targeting must be an object');
    const logic = jsonLogicProblem(t.jsonLogic);
    if (logic) return problem(`/jsonLogic${logic.path}`, logic.message);
    if (JSON.stringify(t.jsonLogic).length > 100 * L.MAX_VALUE_LENGTH)
      return problem('/jsonLogic', `the JSON Logic is longer than ${100 * L.MAX_VALUE_LENGTH} characters`);
    const cost = logicCostProblem(t.jsonLogic);
    if (cost) return problem(`/jsonLogic${cost.path}`, cost.message);
  }
  if (t.prerequisites.length > L.MAX_PREREQUISITES) return problem('/prerequisites', `more than ${L.MAX_PREREQUISITES} prerequisites`);
  for (const [i, p] of t.prerequisites.entries()) {
    const at = `/prerequisites/${i}`;
    if (!isObject(p) || typeof p.flag !== 'string') return problem(`${at}/flag`, 'a prerequisite names a flag');
    if (p.flag === flag.key) return problem(`${at}/flag`, 'a flag cannot be its own prerequisite');
    if (!known.flags.has(p.flag)) return problem(`${at}/flag`, `unknown flag ${p.flag}`);
    if (!Array.isArray(p.variants) || p.variants.length === 0) return problem(`${at}/variants`, 'a prerequisite lists at least one variant');
    if (p.variants.length > L.MAX_VARIANTS || p.variants.some((v) => typeof v !== 'string')) return problem(`${at}/variants`, 'variants are variant names');
  }
  if (t.rules.length > L.MAX_RULES) return problem('/rules', `more than ${L.MAX_RULES} rules`);
  const ids = new Set<string>();
  for (const [i, rule] of t.rules.entries()) {
    const at = `/rules/${i}`;
    if (!isObject(rule)) return problem(at, 'a rule must be an object');
    if (typeof rule.id !== 'string' || rule.id.length === 0 || rule.id.length > L.MAX_NAME_LENGTH)
      return problem(`${at}/id`, 'a rule id is a non-empty string');
    if (ids.has(rule.id)) return problem(`${at}/id`, `duplicate rule id ${rule.id}`);
    ids.add(rule.id);
    if (typeof rule.name !== 'string' || rule.name.length > L.MAX_NAME_LENGTH)
      return problem(`${at}/name`, `a rule name is a string of at most ${L.MAX_NAME_LENGTH} characters`);
    if (typeof rule.enabled !== 'boolean') return problem(`${at}/enabled`, 'enabled must be a boolean');
    const conditions = conditionsProblem(rule.conditions, `${at}/conditions`, 0);
    if (conditions) return conditions;
    if (!Array.isArray(rule.segments)) return problem(`${at}/segments`, 'segments must be an array of segment keys');
    if (rule.segments.length > L.MAX_RULE_SEGMENTS) return problem(`${at}/segments`, `more than ${L.MAX_RULE_SEGMENTS} segments`);
    for (const [j, key] of rule.segments.entries()) {
      if (typeof key !== 'string' || !known.segments.has(key)) return problem(`${at}/segments/${j}`, `unknown segment ${String(key)}`);
    }
    if (!isObject(rule.serve)) return problem(`${at}/serve`, 'a rule serves a variant or a split');
    if ('variant' in rule.serve) {
      if (!exists(rule.serve.variant)) return problem(`${at}/serve/variant`, 'the served variant must be one of the variants');
    } else if ('split' in rule.serve) {
      const p = splitProblem(rule.serve.split, exists);
      if (p) return problem(`${at}/serve/split${p.path}`, p.message);
    } else return problem(`${at}/serve`, 'a rule serves a variant or a split');
  }
  return undefined;
}

/**
 * The first `{"$ref": key}` in a flag's JSON Logic that names no segment, or undefined. flagd loads such
 * a definition and answers PARSE_ERROR for the flag (the engine does the same); an import into Flagpost
 * refuses it instead, naming the evaluator (issue 29), since it can only be a mistake.
 */
export function unknownRefProblem(flags: readonly TargetedFlag[], segments: ReadonlySet<string>): EnvironmentProblem | undefined {
  for (const flag of flags) {
    if (flag.targeting.jsonLogic === undefined) continue;
    const p = unknownRef(flag.targeting.jsonLogic, segments, '/jsonLogic');
    if (p) return { ...p, flagKey: flag.key };
  }
  return undefined;
}

/** The first `{"$ref": key}` naming no segment, or undefined. */
function unknownRef(logic: unknown, segments: ReadonlySet<string>, path: string): TargetingProblem | undefined {
  if (Array.isArray(logic)) {
    for (const [i, item] of logic.entries()) {
      const p = unknownRef(item, segments, `${path}/${i}`);
      if (p) return p;
    }
    return undefined;
  }
  if (!isObject(logic)) return undefined;
  for (const [k, v] of Object.entries(logic)) {
    if (k === '$ref' && typeof v === 'string' && !segments.has(v))
      return problem(`${path}/$ref`, `$ref names ${v}, which is neither an evaluator of the document nor a segment`);
    const p = unknownRef(v, segments, `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    if (p) return p;
  }
  return undefined;
}

function splitProblem(split: Split, exists: (v: unknown) => boolean): TargetingProblem | undefined {
  if (!isObject(split)) return problem('', 'a split must be an object');
  if (split.bucketing !== CURRENT_BUCKETING) return problem('/bucketing', `the bucketing version is ${CURRENT_BUCKETING}`);
  if (split.bucketBy !== undefined) {
    const attr = attributeProblem(split.bucketBy);
    if (attr) return problem('/bucketBy', attr);
    if (split.bucketBy.startsWith('$')) return problem('/bucketBy', 'a split buckets by a context attribute');
  }
  if (!Array.isArray(split.weights) || split.weights.length === 0) return problem('/weights', 'a split needs at least one variant');
  if (split.weights.length > L.MAX_VARIANTS) return problem('/weights', `more than ${L.MAX_VARIANTS} entries`);
  const seen = new Set<string>();
  let total = 0;
  for (const [i, w] of split.weights.entries()) {
    if (!isObject(w) || !exists(w.variant)) return problem(`/weights/${i}/variant`, 'must be one of the variants');
    if (seen.has(w.variant)) return problem(`/weights/${i}/variant`, 'a variant appears once in a split');
    seen.add(w.variant);
    if (!Number.isInteger(w.weight) || w.weight < 0) return problem(`/weights/${i}/weight`, 'a weight is a non-negative integer');
    total += w.weight;
  }
  if (total <= 0) return problem('/weights', 'the weights must add up to more than 0');
  if (total > L.MAX_TOTAL_WEIGHT) return problem('/weights', `the weights add up to more than ${L.MAX_TOTAL_WEIGHT}`);
  return undefined;
}

/**
 * The first problem of a whole environment: each segment, each flag's targeting, prerequisite
 * variants that exist in the prerequisite flag, prerequisites on flags with typed targeting only,
 * no prerequisite cycle and chains at most MAX_PREREQUISITE_DEPTH deep.
 */
export function environmentProblem(flags: readonly TargetedFlag[], segments: readonly Segment[]): EnvironmentProblem | undefined {
  return drain(environmentSteps(flags, segments));
}

/** environmentProblem in steps, one per flag checked (slices.ts runs them between turns of the event loop). */
export function* environmentSteps(flags: readonly TargetedFlag[], segments: readonly Segment[]): Steps<EnvironmentProblem | undefined> {
  const segmentKeys = new Set<string>();
  for (const s of segments) {
    const p = segmentProblem(s);
    if (p) return { ...p, segmentKey: typeof s?.key === 'string' ? s.key : undefined };
    if (segmentKeys.has(s.key)) return { segmentKey: s.key, path: '/key', message: 'duplicate segment key' };
    segmentKeys.add(s.key);
  }
  const byKey = new Map(flags.map((f) => [f.key, f]));
  const known: KnownKeys = { segments: segmentKeys, flags: new Map(flags.map((f) => [f.key, f.type])) };
  for (const flag of flags) {
    yield;
    const p = targetingProblem(flag, known);
    if (p) return { ...p, flagKey: flag.key };
    for (const [i, pre] of flag.targeting.prerequisites.entries()) {
      const target = byKey.get(pre.flag)!;
      if (target.targeting.jsonLogic !== undefined)
        return {
          flagKey: flag.key,
          path: `/prerequisites/${i}/flag`,
          message: `${pre.flag} has imported JSON Logic targeting; a prerequisite must be a flag with rules`,
        };
      for (const [j, v] of pre.variants.entries()) {
        if (!Object.prototype.hasOwnProperty.call(target.targeting.variants, v))
          return { flagKey: flag.key, path: `/prerequisites/${i}/variants/${j}`, message: `${pre.flag} has no variant ${v}` };
      }
    }
  }
  const index = buildIndex(flags, segments);
  for (const flag of flags) {
    yield;
    // Disabled rules count too: enabling one must not take the flag past the limit.
    const disabled = flag.targeting.rules.filter((r) => !r.enabled).flatMap((r) => r.conditions);
    const regex = extensionWorkProblem([...extensionConditions(flag, index), ...disabled], "the flag's (with its segments' and prerequisites')");
    if (regex) return { flagKey: flag.key, path: '/rules', message: regex };
  }
  const depth = new Map<string, number>();
  const visiting = new Set<string>();
  const visit = (key: string, trail: string[]): EnvironmentProblem | number => {
    const known = depth.get(key);
    if (known !== undefined) return known;
    if (visiting.has(key)) return { flagKey: trail[0], path: '/prerequisites', message: `prerequisite cycle: ${[...trail, key].join(' -> ')}` };
    visiting.add(key);
    let deepest = 0;
    for (const pre of byKey.get(key)?.targeting.prerequisites ?? []) {
      const d = visit(pre.flag, [...trail, key]);
      if (typeof d !== 'number') return d;
      deepest = Math.max(deepest, d + 1);
    }
    visiting.delete(key);
    if (deepest > L.MAX_PREREQUISITE_DEPTH)
      return { flagKey: key, path: '/prerequisites', message: `prerequisites nest deeper than ${L.MAX_PREREQUISITE_DEPTH} levels` };
    depth.set(key, deepest);
    return deepest;
  };
  for (const flag of flags) {
    const d = visit(flag.key, []);
    if (typeof d !== 'number') return d;
  }
  return undefined;
}
