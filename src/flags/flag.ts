import {
  type BucketingVersion,
  type Condition,
  CURRENT_BUCKETING,
  type FlagTargeting,
  type FlagType,
  type Prerequisite,
  type Rule,
  type Split,
  type TargetedFlag,
  type Variants,
} from '../targeting/targeting.ts';
import type { FieldProblem } from '../errors.ts';
import { enabledOf, switchTargeting } from './flag-serve.ts';

/** One flag in one environment. */
export interface Flag {
  id: string;
  projectId: string;
  environmentId: string;
  slug: string;
  /** The same in every environment of the slug (the service keeps it so). */
  type: FlagType;
  /**
   * The /v1 switch. Derived from `targeting` on every write (flag-serve.ts `enabledOf`): for a boolean
   * flag the default serve, for the other types the state. Stored so that /v1 reads pay nothing.
   */
  enabled: boolean;
  /** Variants, default serve, rules and prerequisites in this environment (issue 18). */
  targeting: FlagTargeting;
  payload: Record<string, unknown> | null;
  expiredAt: string | null;
  description: string;
  isPreview: boolean;
  previewName: string | null;
  /** TipTap JSON document (contract D9). */
  previewContent: unknown;
  /** Tags of the flag (the same in every environment); absent on a new flag: none. */
  tags?: string[];
  /** When the flag was archived (the same in every environment), or null; absent: not archived. */
  archivedAt?: string | null;
  createdAt: string;
  updatedAt: string;
  /** Incremented by every write of this flag in this environment; change requests are based on one (issue 24). */
  version: number;
}

export const SLUG_MAX_LENGTH = 150;
/** A tag: short, lower-case words (`team-checkout`, `q3`, `experiment`). */
export const TAG_PATTERN = '^[a-z0-9](?:[a-z0-9._-]{0,38}[a-z0-9])?$';
export const MAX_TAGS = 20;

/**
 * Letters, digits and symbols of any script (Unleash and flagd keys may be UTF-8: `Hellø_Wørld`, emoji),
 * with `.`, `_` and `-` inside; no spaces, slashes or URL delimiters. A JSON schema pattern (Ajv compiles
 * it with the `u` flag); use SLUG_REGEX in code.
 */
export const SLUG_PATTERN = '^[\\p{L}\\p{N}\\p{So}](?:[\\p{L}\\p{N}\\p{So}\\p{M}._-]*[\\p{L}\\p{N}\\p{So}\\p{M}])?$';
export const SLUG_REGEX = new RegExp(SLUG_PATTERN, 'u');

/**
 * Slugs of the fixed routes below /v1/flags. GET /v1/flags/preview shadows a flag named `preview`;
 * `code-refs` is only POSTed today, but is kept free so that a GET on it can be added later
 * (docs/adr/0003-reserved-slugs.md).
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set(['preview', 'code-refs']);

/** Writable fields, as sent by the admin API; absent means "keep", null means "clear". */
export interface FlagValues {
  enabled?: boolean;
  payload?: Record<string, unknown> | null;
  expiredAt?: string | null;
  description?: string | null;
  isPreview?: boolean;
  previewName?: string | null;
  previewContent?: unknown;
  state?: FlagTargeting['state'];
  variants?: Variants;
  defaultVariant?: string | null;
  rules?: RuleInput[];
  prerequisites?: Prerequisite[];
  /** null removes imported JSON Logic. */
  jsonLogic?: unknown;
  /** flagd flag metadata; null removes it. */
  metadata?: Record<string, string | number | boolean> | null;
}

/** A rule as the admin API takes it: everything but what it serves has a default. */
export interface RuleInput {
  id?: string;
  name?: string;
  enabled?: boolean;
  conditions?: Condition[];
  segments?: string[];
  serve: { variant?: string; split?: Omit<Split, 'bucketing'> & { bucketing?: BucketingVersion } };
}

/** Problems of rules as sent that the types cannot express: a rule serves a variant or a split, not both. */
export function ruleInputProblems(rules: RuleInput[] | undefined, path: string): FieldProblem[] {
  return (rules ?? []).flatMap((rule, i) =>
    (rule.serve.variant === undefined) === (rule.serve.split === undefined)
      ? [{ field: `${path}.${i}.serve`, reason: 'must have either variant or split' }]
      : [],
  );
}

/** Rules as stored: defaults filled in, a new id for a rule without one, the current bucketing for a new split. */
/** The id prefix of the rule a release owns (issue 33, src/releases/release.ts `releaseRuleId`). */
export const RELEASE_RULE_PREFIX = 'release-';

const ownedRuleShape = (rule: Rule): string =>
  JSON.stringify([
    rule.name,
    rule.enabled,
    rule.conditions,
    rule.segments,
    'variant' in rule.serve ? rule.serve.variant : [rule.serve.split.bucketing, rule.serve.split.weights.map((w) => [w.variant, w.weight])],
  ]);

/**
 * The release rule a write by hand would change (issue 33): while a release is active its rule is the
 * flag's last one and only the release moves it, so a write that changes it, removes it, adds one, or
 * puts a rule after it is refused, naming the release. The flag's other rules stay editable.
 */
export function releaseRuleChange(before: readonly Rule[], after: readonly Rule[]): { ruleId: string; releaseId: string } | undefined {
  const ids = new Set([...before, ...after].filter((r) => r.id.startsWith(RELEASE_RULE_PREFIX)).map((r) => r.id));
  for (const ruleId of ids) {
    const was = before.find((r) => r.id === ruleId);
    const is = after.find((r) => r.id === ruleId);
    const moved = is !== undefined && after[after.length - 1] !== is && before[before.length - 1] === was;
    if (!was || !is || moved || ownedRuleShape(was) !== ownedRuleShape(is)) return { ruleId, releaseId: ruleId.slice(RELEASE_RULE_PREFIX.length) };
  }
  return undefined;
}

export function normalizeRules(rules: RuleInput[], newId: () => string): Rule[] {
  return rules.map((rule) => ({
    id: rule.id ?? newId(),
    name: rule.name ?? '',
    enabled: rule.enabled ?? true,
    conditions: rule.conditions ?? [],
    segments: rule.segments ?? [],
    serve: rule.serve.split
      ? { split: { ...rule.serve.split, bucketing: rule.serve.split.bucketing ?? CURRENT_BUCKETING } }
      : { variant: rule.serve.variant ?? '' },
  }));
}

/**
 * Applies PATCH semantics of the admin API to a flag. The switch (`enabled`) is applied first and the
 * targeting fields over it, so that a request naming both gets the targeting it spells out; `enabled` is
 * then derived from the result. A boolean switch without a variant of that value keeps the targeting
 * (the service refuses such a request before: `switchProblem`).
 */
export function applyFlagValues(flag: Flag, values: FlagValues, updatedAt: string, newId: () => string): Flag {
  const next = { ...flag, updatedAt };
  let targeting: FlagTargeting = { ...flag.targeting };
  if (values.variants !== undefined) targeting.variants = values.variants;
  if (values.enabled !== undefined) targeting = switchTargeting(flag.type, targeting, values.enabled) ?? targeting;
  if (values.state !== undefined) targeting.state = values.state;
  if (values.defaultVariant !== undefined) targeting.defaultVariant = values.defaultVariant;
  if (values.rules !== undefined) targeting.rules = normalizeRules(values.rules, newId);
  if (values.prerequisites !== undefined) targeting.prerequisites = values.prerequisites;
  if (values.jsonLogic === null) delete targeting.jsonLogic;
  else if (values.jsonLogic !== undefined) targeting.jsonLogic = values.jsonLogic;
  if (values.metadata === null) delete targeting.metadata;
  else if (values.metadata !== undefined) targeting.metadata = values.metadata;
  next.targeting = targeting;
  next.enabled = enabledOf(flag.type, targeting);
  if (values.payload !== undefined) next.payload = values.payload;
  if (values.expiredAt !== undefined) next.expiredAt = values.expiredAt === null ? null : normalizeDate(values.expiredAt);
  if (values.description !== undefined) next.description = values.description ?? '';
  if (values.isPreview !== undefined) next.isPreview = values.isPreview;
  if (values.previewName !== undefined) next.previewName = values.previewName;
  if (values.previewContent !== undefined) next.previewContent = values.previewContent;
  return next;
}

/**
 * Everything a flag has in one environment that a change may set (issue 24): the targeting (default
 * serve, rules and their splits, prerequisites, variants, flagd's state, imported JSON Logic, metadata)
 * and what /v1 answers besides the switch. Applied with `applyFlagValues` it gives back exactly this
 * configuration; `enabled` follows from it.
 */
export interface FlagConfig {
  state: FlagTargeting['state'];
  variants: Variants;
  defaultVariant: string | null;
  rules: Rule[];
  prerequisites: Prerequisite[];
  jsonLogic: unknown;
  metadata: Record<string, string | number | boolean> | null;
  payload: Record<string, unknown> | null;
  expiredAt: string | null;
  description: string;
}

export const flagConfig = (f: Flag): FlagConfig => ({
  state: f.targeting.state,
  variants: f.targeting.variants,
  defaultVariant: f.targeting.defaultVariant,
  rules: f.targeting.rules,
  prerequisites: f.targeting.prerequisites,
  jsonLogic: f.targeting.jsonLogic ?? null,
  metadata: f.targeting.metadata ?? null,
  payload: f.payload,
  expiredAt: f.expiredAt,
  description: f.description,
});

export const FLAG_CONFIG_FIELDS = Object.keys(flagConfig({ targeting: {} } as Flag)) as Array<keyof FlagConfig & string>;

/** True when the values change the flag's targeting (and so need the engine's validation). */
export function touchesTargeting(values: FlagValues): boolean {
  return (['state', 'variants', 'defaultVariant', 'rules', 'prerequisites', 'jsonLogic', 'metadata'] as const).some((k) => values[k] !== undefined);
}

/**
 * What the engine evaluates of a flag. The read path and the playground both build their compiled
 * environment from this, so that they evaluate the same thing.
 */
export const targetedFlag = (f: Flag): TargetedFlag => ({ key: f.slug, type: f.type, targeting: f.targeting });

/** A flag as the audit log records it: targeting fields at the top, so that an entry shows only what changed. */
export const auditedFlag = (f: Flag) => ({
  type: f.type,
  enabled: f.enabled,
  payload: f.payload,
  expiredAt: f.expiredAt,
  description: f.description,
  isPreview: f.isPreview,
  previewName: f.previewName,
  previewContent: f.previewContent,
  state: f.targeting.state,
  variants: f.targeting.variants,
  defaultVariant: f.targeting.defaultVariant,
  rules: f.targeting.rules,
  prerequisites: f.targeting.prerequisites,
  jsonLogic: f.targeting.jsonLogic ?? null,
  metadata: f.targeting.metadata ?? null,
});
export const AUDITED_FLAG_FIELDS = Object.keys(auditedFlag({ targeting: {} } as Flag)) as Array<keyof ReturnType<typeof auditedFlag> & string>;

/** Stores every date-time in one form, ISO-8601 UTC with milliseconds. */
export function normalizeDate(value: string): string {
  return new Date(value).toISOString();
}

/** GET /v1/flags/{slug}: the Flag resource of the specification, without timestamps. */
export const publicFlag = (f: Flag) => ({
  slug: f.slug,
  enabled: f.enabled,
  payload: f.payload,
  expiredAt: f.expiredAt,
  description: f.description,
});

/** Elements of GET /v1/flags: Flag with timestamps. */
export const listedFlag = (f: Flag) => ({ ...publicFlag(f), createdAt: f.createdAt, updatedAt: f.updatedAt });

/** Elements of GET /v1/flags/preview; `html` is the rendered preview content. */
export const previewFlag = (f: Flag, html: string) => ({
  slug: f.slug,
  enabled: f.enabled,
  isPreview: true as const,
  previewName: f.previewName,
  previewContent: html,
  expiredAt: f.expiredAt,
  createdAt: f.createdAt,
});

/** The admin API's view of a flag in one environment. */
/** `lastEvaluatedAt`: the latest evaluation counted in this environment (usage/flag-usage.service.ts, through the LastEvaluated port), null when none is kept. */
export const adminFlag = (
  f: Flag,
  env: { key: string; name: string },
  flagd: { portable: boolean; note: string | null },
  lastEvaluatedAt: string | null = null,
) => ({
  slug: f.slug,
  environment: { key: env.key, name: env.name },
  key: env.key,
  name: env.name,
  enabled: f.enabled,
  payload: f.payload,
  expiredAt: f.expiredAt,
  description: f.description,
  isPreview: f.isPreview,
  previewName: f.previewName,
  previewContent: f.previewContent ?? null,
  createdAt: f.createdAt,
  updatedAt: f.updatedAt,
  type: f.type,
  state: f.targeting.state,
  variants: f.targeting.variants,
  defaultVariant: f.targeting.defaultVariant,
  rules: f.targeting.rules,
  prerequisites: f.targeting.prerequisites,
  jsonLogic: f.targeting.jsonLogic ?? null,
  metadata: f.targeting.metadata ?? null,
  version: f.version,
  flagd,
  lastEvaluatedAt,
});

/** Newest first; ties (same millisecond) broken by the time-ordered id. */
export function byNewest(a: Flag, b: Flag): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
