import { AppError, type FieldProblem } from '../errors.ts';
import { environmentProblem, hasTargeting, type Segment, targetingProblem, toFlagdDefinition } from '../targeting/index.ts';
import { type Flag, targetedFlag } from './flag.ts';

// The engine's checks as the admin API's answers: a flag's targeting is validated with the whole
// environment it lives in (its segments, the flags its prerequisites name, no prerequisite cycle), and
// the first problem becomes a 400 naming the field.

/** A JSON pointer of the engine (`/rules/0/serve/variant`) under a prefix (`body.rules.0.serve.variant`). */
export const fieldOf = (at: string, pointer: string): string => [at, ...pointer.split('/').filter(Boolean)].join('.');

/**
 * The first problem of `flags` (one environment, the changed flag included) and `segments`, with its
 * field: `<at>.<path>` when it is in the flag `slug`, `flags.<key>.<path>` or `segments.<key>.<path>`
 * when the change broke another flag (a prerequisite's variant renamed, a cycle). Undefined when valid.
 */
export function environmentFieldProblem(flags: readonly Flag[], segments: readonly Segment[], slug: string, at: string): FieldProblem | undefined {
  const targeted = flags.map(targetedFlag);
  const own = targeted.find((f) => f.key === slug);
  if (own) {
    const known = { segments: new Set(segments.map((s) => s.key)), flags: new Map(targeted.map((f) => [f.key, f.type])) };
    const p = targetingProblem(own, known);
    if (p) return { field: fieldOf(at, p.path), reason: p.message };
  }
  const p = environmentProblem(targeted, segments);
  if (!p) return undefined;
  if (p.flagKey === slug) return { field: fieldOf(at, p.path), reason: p.message };
  if (p.flagKey !== undefined) return { field: fieldOf(`flags.${p.flagKey}`, p.path), reason: p.message };
  return { field: fieldOf(`segments.${p.segmentKey ?? ''}`, p.path), reason: p.message };
}

/** Throws the 400 of `environmentFieldProblem`. */
export function checkEnvironment(flags: readonly Flag[], segments: readonly Segment[], slug: string, at: string): void {
  const problem = environmentFieldProblem(flags, segments, slug, at);
  if (problem) throw AppError.validation([problem]);
}

export interface FlagdPortability {
  /** True when flagd evaluates the flag's export exactly as Flagpost does. */
  portable: boolean;
  /** Why not, when not. */
  note: string | null;
}

const PORTABLE: FlagdPortability = Object.freeze({ portable: true, note: null });

/**
 * Whether each flag of one environment can be exported to flagd (its rules, segments and prerequisites
 * use only what flagd evaluates), by slug. One export of the environment, so a listing stays linear.
 */
export function flagdPortability(flags: readonly Flag[], segments: readonly Segment[]): Map<string, FlagdPortability> {
  const result = new Map<string, FlagdPortability>();
  if (!flags.some((f) => hasTargeting(f.targeting))) return result;
  const definition = toFlagdDefinition(flags.map(targetedFlag), segments);
  for (const [key, entry] of Object.entries(definition.flags)) {
    if (entry.metadata?.['flagpost.portable'] === false) result.set(key, { portable: false, note: String(entry.metadata['flagpost.note'] ?? '') });
  }
  return result;
}

export const portabilityOf = (map: ReadonlyMap<string, FlagdPortability>, slug: string): FlagdPortability => map.get(slug) ?? PORTABLE;
