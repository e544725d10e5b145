import { buildIndex, collectRefs, segmentLogic, targetingLogic, type EnvironmentIndex } from './compile.ts';
import { isExtension } from './conditions.ts';
import type { Condition, Segment, TargetedFlag } from './targeting.ts';

// An environment as a flagd flag definition. Flags whose targeting flagd can evaluate are exported as
// JSON Logic that flagd evaluates exactly as Flagpost does. A flag that needs a Flagpost extension
// (matches, inCidr, case-insensitive comparisons, dates read from the context), itself or through a
// segment or a prerequisite, cannot be: it is exported DISABLED with its variants and default, so
// that flagd answers the caller's default instead of a different value, and its metadata says why
// (`flagpost.portable: false`, `flagpost.note`). Every targeted flag also carries its typed targeting
// as JSON in `flagpost.targeting`, which parseFlagdDefinition reads back (rule ids and names,
// switched-off rules, extension conditions) when it still matches the exported JSON Logic.

export const FLAGD_SCHEMA = 'https://flagd.dev/schema/v0/flags.json';
/** Flag metadata keys the export writes and the import reads. */
export const META_TARGETING = 'flagpost.targeting';
export const META_PORTABLE = 'flagpost.portable';
export const META_NOTE = 'flagpost.note';

export interface FlagdFlag {
  state: 'ENABLED' | 'DISABLED';
  variants: Record<string, unknown>;
  defaultVariant: string | null;
  targeting?: unknown;
  metadata?: Record<string, string | number | boolean>;
}

export interface FlagdDefinition {
  $schema: typeof FLAGD_SCHEMA;
  flags: Record<string, FlagdFlag>;
  $evaluators?: Record<string, unknown>;
}

/** Whether flagd can evaluate a flag as Flagpost does, and if not, what stands in the way. */
export interface Portability {
  portable: boolean;
  /** Human-readable reasons, e.g. `rule "Staff" uses matches on email`. Empty when portable. */
  reasons: string[];
}

/** The typed targeting the export embeds in `flagpost.targeting` (version 1). */
export interface EmbeddedTargeting {
  v: 1;
  state: 'ENABLED' | 'DISABLED';
  rules: TargetedFlag['targeting']['rules'];
  prerequisites: TargetedFlag['targeting']['prerequisites'];
  /** Segments the flag uses that flagd cannot evaluate (so they are not in `$evaluators`). */
  segments?: Segment[];
}

const describe = (c: Condition) => `${c.caseInsensitive ? 'case-insensitive ' : ''}${c.operator} on ${c.attribute}`;

/** Whether flagd can evaluate the flag (its rules, the segments they use and its prerequisites). */
export function portabilityOf(flag: TargetedFlag, env: EnvironmentIndex, seen = new Set<string>()): Portability {
  const reasons: string[] = [];
  if (seen.has(flag.key)) return { portable: true, reasons };
  seen.add(flag.key);
  for (const rule of flag.targeting.rules) {
    if (!rule.enabled) continue;
    for (const c of rule.conditions) if (isExtension(c)) reasons.push(`rule "${rule.name}" uses ${describe(c)}`);
    for (const key of rule.segments) {
      for (const c of env.segments.get(key)?.conditions ?? []) if (isExtension(c)) reasons.push(`segment "${key}" uses ${describe(c)}`);
    }
  }
  if (flag.targeting.jsonLogic !== undefined) {
    for (const key of collectRefs(flag.targeting.jsonLogic, new Set())) {
      const segment = env.segments.get(key);
      if (segment && !isPortableSegment(segment)) reasons.push(`segment "${key}" uses ${segment.conditions.filter(isExtension).map(describe).join(', ')}`);
    }
  }
  for (const p of flag.targeting.prerequisites) {
    const target = env.flags.get(p.flag);
    if (target && !portabilityOf(target, env, seen).portable) reasons.push(`prerequisite flag "${p.flag}" is not portable to flagd`);
  }
  return { portable: reasons.length === 0, reasons };
}

/** True when flagd can evaluate the segment's conditions. */
export const isPortableSegment = (s: Segment): boolean => !s.conditions.some(isExtension);

/**
 * The environment as a flagd flag definition (`$schema`, `flags`, `$evaluators` for the portable
 * segments). See the header of this file for flags flagd cannot evaluate.
 */
export function toFlagdDefinition(flags: readonly TargetedFlag[], segments: readonly Segment[]): FlagdDefinition {
  const env = buildIndex(flags, segments);
  const out: Record<string, FlagdFlag> = {};
  for (const flag of flags) {
    const t = flag.targeting;
    const portability = portabilityOf(flag, env);
    const metadata: Record<string, string | number | boolean> = { ...(t.metadata ?? {}) };
    const typed = t.jsonLogic === undefined && (t.rules.length > 0 || t.prerequisites.length > 0);
    if (typed) metadata[META_TARGETING] = JSON.stringify(embedded(flag, env, portability.portable));
    const entry: FlagdFlag = { state: t.state, variants: t.variants, defaultVariant: t.defaultVariant };
    if (!portability.portable) {
      entry.state = 'DISABLED';
      metadata[META_PORTABLE] = false;
      metadata[META_NOTE] =
        `flagd cannot evaluate this flag's targeting (${portability.reasons.join('; ')}); exported DISABLED so that flagd answers the caller's default`;
    } else {
      const logic = targetingLogic(flag, env, { encode: false, refSegments: true });
      if (logic !== undefined) entry.targeting = logic;
    }
    if (Object.keys(metadata).length > 0) entry.metadata = metadata;
    out[flag.key] = entry;
  }
  const evaluators: Record<string, unknown> = {};
  for (const s of segments) if (isPortableSegment(s)) evaluators[s.key] = segmentLogic(s);
  const doc: FlagdDefinition = { $schema: FLAGD_SCHEMA, flags: out };
  if (Object.keys(evaluators).length > 0) doc.$evaluators = evaluators;
  return doc;
}

function embedded(flag: TargetedFlag, env: EnvironmentIndex, portable: boolean): EmbeddedTargeting {
  const t = flag.targeting;
  const payload: EmbeddedTargeting = { v: 1, state: t.state, rules: t.rules, prerequisites: t.prerequisites };
  if (!portable) {
    const keys = new Set(t.rules.flatMap((r) => r.segments));
    const needed = [...keys].map((k) => env.segments.get(k)).filter((s): s is Segment => s !== undefined && !isPortableSegment(s));
    if (needed.length > 0) payload.segments = needed;
  }
  return payload;
}

/** Whether flagd can evaluate one flag of an environment as Flagpost does (for the API and the dashboard). */
export function flagPortability(key: string, flags: readonly TargetedFlag[], segments: readonly Segment[]): Portability | undefined {
  const env = buildIndex(flags, segments);
  const flag = env.flags.get(key);
  return flag ? portabilityOf(flag, env) : undefined;
}
