// The targeting model of a flag in one environment (issue 18): variants, a default serve, ordered rules
// with conditions and segments, weighted splits, prerequisites. Pure types and rules, no I/O.
//
// Flagpost's own typed model is what the admin API and the dashboard edit. It compiles to a flagd flag
// definition (JSON Logic targeting with flagd's custom operators), which is what Flagpost evaluates and
// exports, so that Flagpost and flagd give the same answer for the same definition. A flagd definition
// imported as-is keeps its JSON Logic when it cannot be read back as typed rules (`jsonLogic`).

/** A flag's type is project-wide: every environment of a flag has variants of the same type. */
export type FlagType = 'boolean' | 'string' | 'number' | 'object';
export const FLAG_TYPES: readonly FlagType[] = ['boolean', 'string', 'number', 'object'];

export type VariantValue = boolean | string | number | Record<string, unknown>;
/** Named variants; their values all have the flag's type. */
export type Variants = Record<string, VariantValue>;

/** The variants every boolean flag starts with; today's switch picks one of them. */
export const BOOLEAN_VARIANTS: Readonly<Variants> = Object.freeze({ on: true, off: false });

/** The condition operators, in the order the API documents them. */
export const OPERATORS = [
  'equals',
  'in',
  'startsWith',
  'endsWith',
  'contains',
  'lt',
  'lte',
  'gt',
  'gte',
  'semverEq',
  'semverLt',
  'semverLte',
  'semverGt',
  'semverGte',
  'semverCaret',
  'semverTilde',
  'before',
  'after',
  'exists',
  'inCidr',
  'matches',
  'rollout',
] as const;
export type Operator = (typeof OPERATORS)[number];

/** One test of one context attribute. */
export interface Condition {
  /** Dot path into the evaluation context (`user.country`); `targetingKey` is the context's key. */
  attribute: string;
  operator: Operator;
  /**
   * The operands: one for most operators, the set for `in` (and for `equals`, any of them),
   * none for `exists`. Dates are ISO-8601 strings or `now`; CIDRs `10.0.0.0/8` or `2001:db8::/32`.
   * `rollout`: `[upTo, groupId, above?, modulus?, seed?]` (see conditions.ts `rolloutBucket`).
   */
  values: Array<string | number | boolean>;
  /** True inverts the result (`not in`, `does not start with`, ...). */
  negate?: boolean;
  /** String operators compare case-insensitively. */
  caseInsensitive?: boolean;
}

/** A reusable group of conditions, per project, referenced by key from rules. */
export interface Segment {
  key: string;
  name: string;
  description: string;
  /** `all`: every condition holds; `any`: at least one does. */
  match: 'all' | 'any';
  conditions: Condition[];
}

/** Bucketing algorithm of a split, recorded on every split so that a change never moves users silently. */
export type BucketingVersion = 'flagd-fractional-v2';
export const CURRENT_BUCKETING: BucketingVersion = 'flagd-fractional-v2';

/** A weighted split (percentage rollout, A/B/n), sticky by `targetingKey` unless `bucketBy` names another attribute. */
export interface Split {
  bucketing: BucketingVersion;
  /** Dot path of the attribute that buckets; absent means flagd's default (`flagKey + targetingKey`). */
  bucketBy?: string;
  /** Integer weights, in order; users keep their bucket when the first variants' weights only grow. */
  weights: Array<{ variant: string; weight: number }>;
}

export type Serve = { variant: string } | { split: Split };

export interface Rule {
  /** Stable id, so that the playground and the history can name a rule. */
  id: string;
  name: string;
  /** A switched-off rule is kept but never matches. */
  enabled: boolean;
  /** Every condition and every referenced segment must match (AND). */
  conditions: Condition[];
  segments: string[];
  serve: Serve;
}

/** The flag serves its default unless `flag` evaluates to one of `variants` for the same context. */
export interface Prerequisite {
  flag: string;
  variants: string[];
}

/** A flag's targeting in one environment. */
export interface FlagTargeting {
  /** flagd's state: DISABLED is "switched off entirely" (no value, reason DISABLED), not a boolean false. */
  state: 'ENABLED' | 'DISABLED';
  variants: Variants;
  /** The default serve; null serves no value (the caller's default applies, as in flagd). */
  defaultVariant: string | null;
  prerequisites: Prerequisite[];
  rules: Rule[];
  /** Imported JSON Logic that is not expressible as rules; when set, `prerequisites` and `rules` are empty. */
  jsonLogic?: unknown;
  /** flagd flag metadata (imported or set by the admin API): returned with every evaluation of the flag. */
  metadata?: Record<string, string | number | boolean>;
}

/** What the engine is given per flag of an environment. */
export interface TargetedFlag {
  key: string;
  type: FlagType;
  targeting: FlagTargeting;
}

/** OpenFeature resolution reasons Flagpost answers. */
export type Reason = 'STATIC' | 'TARGETING_MATCH' | 'SPLIT' | 'DEFAULT' | 'DISABLED' | 'ERROR';

/** One flag evaluated for one context. `value` and `variant` are absent when no variant is served. */
export interface Evaluation {
  key: string;
  value?: VariantValue;
  variant?: string;
  reason: Reason;
  errorCode?: 'FLAG_NOT_FOUND' | 'PARSE_ERROR' | 'TYPE_MISMATCH' | 'TARGETING_KEY_MISSING' | 'INVALID_CONTEXT' | 'GENERAL';
  errorDetails?: string;
  /** OFREP metadata: strings, numbers and booleans only (the rule and segment that matched, ...). */
  metadata: Record<string, string | number | boolean>;
}

/** True when a flag has anything to evaluate against a context (switched-off rules do not count); without it the answer is STATIC. */
export function hasTargeting(t: FlagTargeting): boolean {
  return t.rules.some((r) => r.enabled) || t.prerequisites.length > 0 || t.jsonLogic !== undefined;
}
