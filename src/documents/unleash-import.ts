import { isIP } from 'node:net';
import { SLUG_REGEX } from '../flags/index.ts';
import type { DocumentFlag, DocumentFlagEnvironment, DocumentSegment } from './project-document.ts';
import { type Condition, type FlagType, type Prerequisite, regexProblem, type Rule, rolloutBucket, type VariantValue } from '../targeting/index.ts';
import type { UnleashConstraint, UnleashFeature, UnleashFeatureEnvironment, UnleashModel, UnleashStrategy, UnleashVariant } from './unleash-format.ts';

// Unleash's toggles as Flagpost flags (issue 21, docs/adr/0039). Pure. An Unleash toggle is enabled when
// any of its strategies is (each: constraints and segments, all of them, then the strategy's own test);
// a Flagpost flag serves the first rule that matches. So each strategy becomes rules that serve the
// enabled answer, one per alternative where Unleash's test is an "or" (default stickiness, dates against
// the context's currentTime or now). Rollouts use the `rollout` operator, which buckets exactly as
// Unleash does (MurmurHash3 of `groupId:value`, seed 0, modulo 100, plus one), and variants the same
// operator over ranges of the total weight with Unleash's variant seed: users keep their bucket.
//
// Context: Unleash's `userId` is OpenFeature's `targetingKey` (as in Unleash's own OpenFeature
// provider); every other field, `properties` included, is a top-level attribute of the same name.

/** What an import could not carry over, never silently dropped. */
export interface NotCarried {
  feature?: string;
  environment?: string;
  item: string;
  reason: string;
}

export interface UnleashTranslation {
  environments: string[];
  segments: Record<string, DocumentSegment>;
  flags: Record<string, DocumentFlag>;
  notCarried: NotCarried[];
}

/** Unleash's variant seed (its client specification). */
export const VARIANT_SEED = 86028157;
const SEGMENT_KEY = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const STICKINESS_CHAIN = ['userId', 'sessionId', 'remoteAddress'];

/** Alternatives (any of them), each a list of conditions (all of them); [] never holds, [[]] always does. */
type Alternatives = Condition[][];
const ALWAYS: Alternatives = [[]];
const NEVER: Alternatives = [];

/** A map by name with no prototype: an Unleash name such as `__proto__` is a key like any other. */
const byNames = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

const attribute = (contextName: string) => (contextName === 'userId' ? 'targetingKey' : contextName);
const cond = (contextName: string, operator: Condition['operator'], values: Condition['values'], extra: Partial<Condition> = {}): Condition => ({
  attribute: attribute(contextName),
  operator,
  values,
  ...extra,
});
const missing = (contextName: string): Condition => cond(contextName, 'exists', [], { negate: true });

function product(parts: Alternatives[]): Alternatives {
  return parts.reduce<Alternatives>((acc, alts) => acc.flatMap((a) => alts.map((b) => [...a, ...b])), ALWAYS);
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const SEMVER_OPERATORS: Record<string, Condition['operator']> = {
  SEMVER_EQ: 'semverEq',
  SEMVER_GT: 'semverGt',
  SEMVER_LT: 'semverLt',
  SEMVER_GTE: 'semverGte',
  SEMVER_LTE: 'semverLte',
};
const NUMBER_OPERATORS: Record<string, Condition['operator']> = { NUM_GT: 'gt', NUM_GTE: 'gte', NUM_LT: 'lt', NUM_LTE: 'lte' };
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/** A range as Flagpost's inCidr takes it (an address alone is its own /32 or /128), or undefined when invalid. */
function cidrOf(range: string): string | undefined {
  const [net = '', bits, ...rest] = range.split('/');
  const family = isIP(net);
  if (family === 0 || rest.length > 0) return undefined;
  const max = family === 4 ? 32 : 128;
  if (bits === undefined) return `${net}/${max}`;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= max ? `${net}/${bits}` : undefined;
}

/**
 * One constraint as alternatives, with Unleash's semantics: values trimmed, empty ones dropped;
 * `inverted` negates the whole test (a missing attribute fails the test, so passes when inverted).
 */
export function constraintAlternatives(c: UnleashConstraint, note: (item: string, reason: string) => void): Alternatives {
  const values = c.values.filter((v) => v !== '').map((v) => v.trim());
  const flip = (alts: Alternatives): Alternatives => {
    if (!c.inverted) return alts;
    if (alts.length === 0) return ALWAYS;
    if (alts.length === 1 && alts[0]!.length === 0) return NEVER;
    if (alts.length === 1 && alts[0]!.length === 1) return [[{ ...alts[0]![0]!, negate: alts[0]![0]!.negate !== true }]];
    throw new Error('flip of a composite constraint');
  };
  const ci = c.caseInsensitive ? { caseInsensitive: true } : {};
  switch (c.operator) {
    case 'IN':
    case 'NOT_IN': {
      const alts = values.length === 0 ? NEVER : [[cond(c.contextName, 'in', values)]];
      return c.operator === 'IN' ? flip(alts) : flip(alts.length === 0 ? ALWAYS : [[{ ...alts[0]![0]!, negate: true }]]);
    }
    case 'STR_STARTS_WITH':
    case 'STR_ENDS_WITH':
    case 'STR_CONTAINS': {
      if (values.length === 0) return flip(NEVER);
      const op = c.operator === 'STR_STARTS_WITH' ? 'startsWith' : c.operator === 'STR_ENDS_WITH' ? 'endsWith' : 'contains';
      if (values.length === 1) return flip([[cond(c.contextName, op, values, ci)]]);
      // Any of several values: one linear-time regular expression (RE2), not one rule per value.
      const any = `(?:${values.map(escapeRegex).join('|')})`;
      const pattern = op === 'startsWith' ? `^${any}` : op === 'endsWith' ? `${any}$` : any;
      return flip([[cond(c.contextName, 'matches', [pattern], ci)]]);
    }
    case 'NUM_EQ':
    case 'NUM_GT':
    case 'NUM_GTE':
    case 'NUM_LT':
    case 'NUM_LTE': {
      const n = Number(c.value ?? values[0]);
      if (!Number.isFinite(n)) return flip(NEVER);
      if (c.operator !== 'NUM_EQ') return flip([[cond(c.contextName, NUMBER_OPERATORS[c.operator]!, [n])]]);
      if (!c.inverted) return [[cond(c.contextName, 'gte', [n]), cond(c.contextName, 'lte', [n])]];
      return [[cond(c.contextName, 'lt', [n])], [cond(c.contextName, 'gt', [n])], [missing(c.contextName)]];
    }
    case 'DATE_AFTER':
    case 'DATE_BEFORE': {
      const at = c.value ?? values[0] ?? '';
      if (Number.isNaN(Date.parse(at))) return flip(NEVER);
      const iso = new Date(at).toISOString();
      const op = c.operator === 'DATE_AFTER' ? 'after' : 'before';
      const negate = c.inverted ? { negate: true } : {};
      // Unleash compares the context's currentTime, or now when it has none.
      return [
        [cond('currentTime', 'exists', []), cond('currentTime', op, [iso], negate)],
        [missing('currentTime'), cond('$flagd.timestamp', op, [iso], negate)],
      ];
    }
    case 'SEMVER_EQ':
    case 'SEMVER_GT':
    case 'SEMVER_LT':
    case 'SEMVER_GTE':
    case 'SEMVER_LTE': {
      const v = (c.value ?? values[0] ?? '').trim();
      if (!SEMVER.test(v)) return flip(NEVER);
      return flip([[cond(c.contextName, SEMVER_OPERATORS[c.operator]!, [v])]]);
    }
    case 'REGEX': {
      const pattern = c.value ?? values[0];
      // Unleash treats a pattern RE2 cannot compile as a test that fails.
      if (pattern === undefined || pattern === '' || regexProblem(pattern) !== undefined) return flip(NEVER);
      return flip([[cond(c.contextName, 'matches', [pattern], ci)]]);
    }
    case 'IN_CIDR': {
      const ranges = values.flatMap((v) => cidrOf(v) ?? []);
      return flip(ranges.length === 0 ? NEVER : [[cond(c.contextName, 'inCidr', ranges)]]);
    }
    default:
      note(`constraint ${c.contextName} ${c.operator}`, 'an operator Flagpost does not know: the constraint never holds, as in Unleash clients that lack it');
      return flip(NEVER);
  }
}

/** The percentage of a rollout as Unleash reads it (a number; `percentage > 0 && bucket <= percentage`). */
const percent = (v: string | undefined) => Math.max(0, Math.min(100, Math.floor(Number(v) || 0)));

/** A strategy's own test (after its constraints and segments) as alternatives. */
function strategyAlternatives(s: UnleashStrategy, featureName: string, note: (item: string, reason: string) => void): Alternatives {
  const p = s.parameters;
  const rollout = (contextName: string, percentage: number, groupId: string): Condition => cond(contextName, 'rollout', [percentage, groupId]);
  switch (s.name) {
    case 'default':
      return ALWAYS;
    case 'userWithId': {
      const ids = (p.userIds ?? '').split(/\s*,\s*/).filter((x) => x !== '');
      return ids.length === 0 ? NEVER : [[cond('userId', 'in', ids)]];
    }
    case 'gradualRolloutUserId':
    case 'gradualRolloutSessionId': {
      const pct = percent(p.percentage);
      return pct === 0 ? NEVER : [[rollout(s.name === 'gradualRolloutUserId' ? 'userId' : 'sessionId', pct, p.groupId ?? '')]];
    }
    case 'gradualRolloutRandom':
      return randomRollout(percent(p.percentage), s.name, note);
    case 'flexibleRollout': {
      const pct = percent(p.rollout);
      if (pct === 0) return NEVER;
      const groupId = p.groupId || featureName;
      const stickiness = p.stickiness || 'default';
      if (stickiness === 'random') return randomRollout(pct, `${s.name} with random stickiness`, note);
      if (stickiness !== 'default') return [[rollout(stickiness, pct, groupId)]];
      // userId, else sessionId, else a random number.
      const alts: Alternatives = [[rollout('userId', pct, groupId)], [missing('userId'), rollout('sessionId', pct, groupId)]];
      if (pct === 100) alts.push([missing('userId'), missing('sessionId')]);
      else
        note(
          `${s.name} at ${pct}% with default stickiness`,
          'callers with neither userId (targetingKey) nor sessionId are bucketed at random by Unleash; Flagpost answers are deterministic, so they are not included',
        );
      return alts;
    }
    case 'remoteAddress': {
      const ranges = (p.IPs ?? '').split(/\s*,\s*/).flatMap((r) => cidrOf(r) ?? []);
      return ranges.length === 0 ? NEVER : [[cond('remoteAddress', 'inCidr', ranges)]];
    }
    case 'applicationHostname':
      note(
        `strategy ${s.name}`,
        'it tests the host name of the process that evaluates; a server answering for many clients has no such name: the strategy never matches',
      );
      return NEVER;
    default:
      note(`strategy ${s.name}`, 'a custom strategy: its code runs in Unleash clients only; it never matches');
      return NEVER;
  }
}

function randomRollout(pct: number, what: string, note: (item: string, reason: string) => void): Alternatives {
  if (pct >= 100) return ALWAYS;
  if (pct > 0)
    note(
      `${what} at ${pct}%`,
      'a random rollout gives a new answer on every evaluation; Flagpost answers deterministically, so it never matches (0% and 100% are carried exactly)',
    );
  return NEVER;
}

/** The value a variant serves in a flag of `type` (Unleash's payload, read as that type). */
export function variantValue(type: FlagType, v: UnleashVariant): VariantValue {
  if (type === 'object') return JSON.parse(v.payload!.value) as Record<string, unknown>;
  if (type === 'number') return Number(v.payload!.value);
  return v.payload?.value ?? v.name;
}

/** The type of a toggle's flag: boolean without variants; else the one type every payload reads as, else string. */
export function flagTypeOf(variants: readonly UnleashVariant[]): FlagType {
  if (variants.length === 0) return 'boolean';
  const isObjectPayload = (v: UnleashVariant) => {
    if (v.payload?.type !== 'json') return false;
    try {
      const parsed: unknown = JSON.parse(v.payload.value);
      return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
    } catch {
      return false;
    }
  };
  if (variants.every(isObjectPayload)) return 'object';
  if (variants.every((v) => v.payload?.type === 'number' && v.payload.value.trim() !== '' && Number.isFinite(Number(v.payload.value)))) return 'number';
  return 'string';
}

/** Every variant of a toggle, in every environment and strategy. */
function allVariants(feature: UnleashFeature): UnleashVariant[] {
  return [...feature.environments.values()].flatMap((e) => [...e.variants, ...e.strategies.flatMap((s) => s.variants)]);
}

/**
 * Rules that pick one of `variants` as Unleash does: overrides first (in order), then the bucket of the
 * stickiness value among the weights (MurmurHash3 of `groupId:value` with the variant seed, modulo the
 * total weight, plus one), the default stickiness being userId, else sessionId, else remoteAddress.
 * Unleash buckets a caller without a stickiness value at random; Flagpost serves that caller the
 * variant of an empty value, the same every time.
 */
function variantRules(
  variants: readonly UnleashVariant[],
  groupId: string,
  stickiness: string,
  names: Map<UnleashVariant, string>,
): Array<{ conditions: Condition[]; variant: string }> {
  const out: Array<{ conditions: Condition[]; variant: string }> = [];
  for (const v of variants)
    for (const o of v.overrides) if (o.values.length > 0) out.push({ conditions: [cond(o.contextName, 'in', o.values)], variant: names.get(v)! });
  const weighted = variants.filter((v) => v.weight > 0);
  const total = weighted.reduce((sum, v) => sum + v.weight, 0);
  const chain = stickiness === 'default' ? STICKINESS_CHAIN : [stickiness];
  chain.forEach((field, i) => {
    const before = chain.slice(0, i).map(missing);
    let upTo = 0;
    for (const v of weighted) {
      const above = upTo;
      upTo += v.weight;
      out.push({ conditions: [...before, cond(field, 'rollout', [upTo, groupId, above, total, VARIANT_SEED])], variant: names.get(v)! });
    }
  });
  const bucket = rolloutBucket(groupId, '', VARIANT_SEED, total);
  let upTo = 0;
  const fallback = weighted.find((v) => (upTo += v.weight) >= bucket)!;
  out.push({ conditions: chain.map(missing), variant: names.get(fallback)! });
  return out;
}

const slugify = (s: string) =>
  s
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 100);

/** Translates an Unleash model into Flagpost's document terms; everything it cannot carry is in `notCarried`. */
export function translateUnleash(model: UnleashModel): UnleashTranslation {
  const notCarried: NotCarried[] = [];
  const segments = byNames<DocumentSegment>();
  // Unleash segment id -> a Flagpost segment key, or the alternatives to inline when it has no single form.
  const segmentRefs = new Map<number, { key: string } | { inline: Alternatives }>();
  const usedKeys = new Set<string>();
  for (const seg of model.segments.values()) {
    const notes: NotCarried[] = [];
    const parts = seg.constraints.map((c) => constraintAlternatives(c, (item, reason) => notes.push({ item: `segment ${seg.name}: ${item}`, reason })));
    notCarried.push(...notes);
    const alts = product(parts);
    if (alts.length !== 1 || alts[0]!.length === 0) {
      segmentRefs.set(seg.id, { inline: alts });
      continue;
    }
    let key = slugify(seg.name);
    if (!SEGMENT_KEY.test(key) || usedKeys.has(key)) key = `segment-${seg.id}`;
    usedKeys.add(key);
    segments[key] = { name: seg.name.slice(0, 200), match: 'all', conditions: alts[0]! };
    segmentRefs.set(seg.id, { key });
  }

  const byName = new Map(model.features.map((f) => [f.name, f]));
  const types = new Map(model.features.map((f) => [f.name, flagTypeOf(allVariants(f))]));
  const flags = byNames<DocumentFlag>();
  for (const feature of model.features) {
    if (!SLUG_REGEX.test(feature.name) || [...feature.name].length > 150 || feature.name === 'preview' || feature.name === 'code-refs') {
      notCarried.push({
        feature: feature.name,
        item: 'toggle',
        reason: 'its name is not a flag slug Flagpost accepts (letters, digits and symbols, with . _ - inside; at most 150; not preview or code-refs)',
      });
      continue;
    }
    const type = types.get(feature.name)!;
    const environments = byNames<DocumentFlagEnvironment>();
    for (const envName of model.environments) {
      const env = feature.environments.get(envName) ?? { enabled: false, strategies: [], variants: [] };
      const note = (item: string, reason: string) => notCarried.push({ feature: feature.name, environment: envName, item, reason });
      environments[envName] = flagEnvironment(feature, env, type, { byName, types, segmentRefs, note });
    }
    flags[feature.name] = { type, environments };
  }
  return { environments: model.environments, segments, flags, notCarried };
}

interface Scope {
  byName: Map<string, UnleashFeature>;
  types: Map<string, FlagType>;
  segmentRefs: Map<number, { key: string } | { inline: Alternatives }>;
  note: (item: string, reason: string) => void;
}

function flagEnvironment(feature: UnleashFeature, env: UnleashFeatureEnvironment, type: FlagType, scope: Scope): DocumentFlagEnvironment {
  const { note } = scope;
  // Variant names as Unleash spells them, unless two variants of this environment share a name.
  const names = new Map<UnleashVariant, string>();
  const variants = byNames<VariantValue>();
  const sources = [{ list: env.variants, label: 'toggle' }, ...env.strategies.map((s, i) => ({ list: s.variants, label: `strategy ${i + 1}` }))];
  for (const { list, label } of sources) {
    for (const v of list) {
      const value = type === 'boolean' ? true : variantValue(type, v);
      let name = v.name;
      if (variants[name] !== undefined && JSON.stringify(variants[name]) !== JSON.stringify(value)) {
        name = `${v.name} (${label})`;
        note(`variant ${v.name} of ${label}`, `another variant of this environment has the same name and another payload: it is named "${name}" here`);
      }
      variants[name] = value;
      names.set(v, name);
    }
  }
  // Variants of the toggle's other environments too, so that every environment can serve them.
  if (type !== 'boolean') for (const v of allVariants(feature)) if (variants[v.name] === undefined) variants[v.name] = variantValue(type, v);
  const base: DocumentFlagEnvironment = type === 'boolean' ? { variants: { on: true, off: false }, defaultVariant: 'off' } : { variants, defaultVariant: null };

  const prerequisites: Prerequisite[] = [];
  let satisfiable = true;
  for (const dep of feature.dependencies) {
    const parent = scope.byName.get(dep.feature);
    const parentType = scope.types.get(dep.feature);
    if (!parent || parentType === undefined || !SLUG_REGEX.test(dep.feature)) {
      note(`dependency on ${dep.feature}`, 'the parent toggle is not in the import: Unleash never enables the child');
      satisfiable = false;
    } else if (parent.dependencies.length > 0) {
      note(`dependency on ${dep.feature}`, 'the parent has dependencies of its own, which Unleash does not follow: it never enables the child');
      satisfiable = false;
    } else if (parentType === 'boolean') {
      // A toggle without variants answers the variant "disabled" when enabled.
      if (!dep.enabled) prerequisites.push({ flag: dep.feature, variants: ['off'] });
      else if (dep.variants.length === 0 || dep.variants.includes('disabled')) prerequisites.push({ flag: dep.feature, variants: ['on'] });
      else satisfiable = false;
    } else if (!dep.enabled) {
      note(
        `dependency on ${dep.feature} being disabled`,
        'the parent has variants, and a flag with variants that is off serves no variant a prerequisite can name: the child is never enabled',
      );
      satisfiable = false;
    } else {
      const parentVariants = [...scope.byName.get(dep.feature)!.environments.values()].flatMap((e) =>
        [...e.variants, ...e.strategies.flatMap((s) => s.variants)].map((v) => v.name),
      );
      const wanted = dep.variants.length === 0 ? [...new Set(parentVariants)] : dep.variants.filter((v) => parentVariants.includes(v));
      if (wanted.length === 0) satisfiable = false;
      else prerequisites.push({ flag: dep.feature, variants: wanted });
    }
  }
  if (!satisfiable) return type === 'boolean' ? base : { ...base, state: 'DISABLED' };

  const rules: Rule[] = [];
  if (env.strategies.length === 0) {
    if (type === 'boolean') base.defaultVariant = env.enabled ? 'on' : 'off';
    else rules.push(...variantServe([], env.variants, feature.name, 's0', 'enabled', names));
  }
  env.strategies.forEach((s, si) => {
    const parts: Alternatives[] = [strategyAlternatives(s, feature.name, note)];
    const segmentKeys: string[] = [];
    for (const id of s.segments) {
      const ref = scope.segmentRefs.get(id);
      if (!ref) {
        note(`segment ${id} of strategy ${si + 1}`, 'the segment is not in the import: Unleash never enables the strategy');
        parts.push(NEVER);
      } else if ('key' in ref) segmentKeys.push(ref.key);
      else parts.push(ref.inline);
    }
    for (const c of s.constraints) parts.push(constraintAlternatives(c, note));
    const label = s.title ?? s.name;
    product(parts).forEach((conditions, ai) => {
      const id = `s${si + 1}${ai === 0 ? '' : `-${ai + 1}`}`;
      if (type === 'boolean') {
        rules.push({ id, name: label, enabled: true, conditions, segments: segmentKeys, serve: { variant: 'on' } });
        return;
      }
      const own = s.variants.some((v) => v.weight > 0);
      const serving = own ? s.variants : env.variants;
      if (!serving.some((v) => v.weight > 0)) {
        note(`strategy ${si + 1}`, 'it enables the toggle without a variant; a flag with variants that serves none answers the caller default');
        return;
      }
      const groupId = own ? String(s.parameters.groupId) : feature.name;
      const stickiness = (own ? (s.variants[0]!.stickiness ?? s.parameters.stickiness) : env.variants[0]!.stickiness) ?? 'default';
      rules.push(...variantServe(conditions, serving, groupId, id, label, names, stickiness, segmentKeys));
    });
  });
  const out: DocumentFlagEnvironment = { ...base, ...(rules.length > 0 ? { rules } : {}), ...(prerequisites.length > 0 ? { prerequisites } : {}) };
  if (feature.description !== '') out.description = feature.description.slice(0, 2000);
  if (!env.enabled) {
    if (type === 'boolean') return { ...out, defaultVariant: 'off', ...(rules.length > 0 ? { rules: rules.map((r) => ({ ...r, enabled: false })) } : {}) };
    return { ...out, state: 'DISABLED' };
  }
  return out;
}

function variantServe(
  conditions: Condition[],
  variants: readonly UnleashVariant[],
  groupId: string,
  id: string,
  label: string,
  names: Map<UnleashVariant, string>,
  stickiness = variants[0]?.stickiness ?? 'default',
  segments: string[] = [],
): Rule[] {
  if (!variants.some((v) => v.weight > 0)) return [];
  return variantRules(variants, groupId, stickiness, names).map((r, i) => ({
    id: `${id}-v${i + 1}`,
    name: label,
    enabled: true,
    conditions: [...conditions, ...r.conditions],
    segments,
    serve: { variant: r.variant },
  }));
}
