import type { EnvironmentSnapshot } from './flag.snapshot.ts';
import type { EvaluationContext, OfrepFlagAnswer } from './ofrep.evaluation.ts';

/**
 * Server-side exposures (issue 32): while an experiment runs on a flag of an environment, a single-flag
 * OFREP evaluation that its split serves records an exposure. The read path owns this port and calls it;
 * experiments/ answers it (ExposureRecorder), so that the read path imports nothing of experiments/.
 * Both calls are made on the hot path: they must not wait for anything (buffer, write later).
 */
export interface ExposurePort {
  /** The rule whose split a running experiment measures on this flag of this environment, or undefined. */
  measuredRule(environmentId: string, flagKey: string): string | undefined;
  /** Notes that `targetingKey` was served `variant` of the flag now. */
  record(environmentId: string, flagKey: string, variant: string, targetingKey: string): void;
}

/**
 * Records the exposure of a single-flag OFREP evaluation when a running experiment measures the split
 * that served it (reason SPLIT, the experiment's rule) and the context has a targeting key. Bulk
 * evaluations never record exposures. The answer itself is untouched.
 */
export function recordOfrepExposure(
  port: ExposurePort | undefined,
  snapshot: EnvironmentSnapshot,
  key: string,
  context: EvaluationContext,
  evaluated: OfrepFlagAnswer,
): void {
  const evaluation = evaluated.evaluation;
  if (!port || !evaluation || evaluation.reason !== 'SPLIT' || evaluation.variant === undefined) return;
  const slug = snapshot.ofrep.entries.get(key)!.flag.slug;
  const rule = port.measuredRule(snapshot.environmentId, slug);
  if (rule === undefined || evaluation.metadata.ruleId !== rule) return;
  const targetingKey = (context as { targetingKey?: unknown } | undefined)?.targetingKey;
  if (typeof targetingKey !== 'string' || targetingKey === '') return;
  port.record(snapshot.environmentId, slug, evaluation.variant, targetingKey);
}
