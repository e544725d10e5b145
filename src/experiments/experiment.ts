// Experiments of an environment (issue 32): the split of one rule of a flag, measured with a project's
// metrics. Pure types and rules.
import type { FlagTargeting } from '../targeting/targeting.ts';

export type ExperimentStatus = 'draft' | 'running' | 'stopped';

/** The split an experiment measures, as it was when it started. */
export interface MeasuredSplit {
  ruleId: string;
  weights: Array<{ variant: string; weight: number }>;
}

export interface Experiment {
  id: string;
  projectId: string;
  environmentId: string;
  key: string;
  name: string;
  flagKey: string;
  /** The rule whose split is measured; null: the flag's only split rule. */
  ruleId: string | null;
  controlVariant: string;
  /** Goal metrics' keys. */
  metrics: string[];
  /** Guardrail metrics' keys (results show them as the goals; they are what must not get worse). */
  guardrails: string[];
  hypothesis: string | null;
  status: ExperimentStatus;
  split: MeasuredSplit | null;
  startedAt: string | null;
  stoppedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What a POST or PATCH sets; absent keeps. */
export interface ExperimentValues {
  name?: string;
  flagKey?: string;
  ruleId?: string | null;
  controlVariant?: string;
  metrics?: string[];
  guardrails?: string[];
  hypothesis?: string | null;
}

/** Fields that decide who is measured: they change only before the start. */
export const DRAFT_ONLY_FIELDS = ['flagKey', 'ruleId', 'controlVariant'] as const;

/** Why a flag's targeting has no split to measure, or the split. */
export type SplitLookup =
  | { split: MeasuredSplit }
  | { problem: 'none' }
  | { problem: 'ambiguous'; count: number }
  | { problem: 'notSplit'; ruleId: string }
  | { problem: 'control'; ruleId: string };

/**
 * The split an experiment measures: the rule `ruleId` (it must serve a split), or the flag's only rule
 * that serves one. The control variant must be one of the split's.
 */
export function splitOf(targeting: FlagTargeting, ruleId: string | null, controlVariant: string): SplitLookup {
  let rule;
  if (ruleId !== null) {
    rule = targeting.rules.find((r) => r.id === ruleId);
    if (!rule || !('split' in rule.serve)) return { problem: 'notSplit', ruleId };
  } else {
    const splits = targeting.rules.filter((r) => 'split' in r.serve);
    if (splits.length === 0) return { problem: 'none' };
    if (splits.length > 1) return { problem: 'ambiguous', count: splits.length };
    rule = splits[0]!;
  }
  if (!('split' in rule.serve)) return { problem: 'none' };
  const weights = rule.serve.split.weights.map((w) => ({ variant: w.variant, weight: w.weight }));
  if (!weights.some((w) => w.variant === controlVariant)) return { problem: 'control', ruleId: rule.id };
  return { split: { ruleId: rule.id, weights } };
}

export const experimentView = (x: Experiment) => ({
  key: x.key,
  name: x.name,
  flagKey: x.flagKey,
  ruleId: x.ruleId,
  controlVariant: x.controlVariant,
  metrics: x.metrics,
  guardrails: x.guardrails,
  hypothesis: x.hypothesis,
  status: x.status,
  split: x.split,
  startedAt: x.startedAt,
  stoppedAt: x.stoppedAt,
  createdAt: x.createdAt,
  updatedAt: x.updatedAt,
});
