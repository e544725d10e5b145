// A release plan's life (issue 33): pure rules, no I/O. The service asks `nextMove` what to do with a
// running release at a given time and with its guardrails' states; the scheduler carries the move out once.

import type { Rule } from '../targeting/index.ts';

export type ReleaseStatus = 'running' | 'waiting_approval' | 'paused' | 'completed' | 'rolled_back' | 'cancelled';
export const RELEASE_STATUSES: readonly ReleaseStatus[] = ['running', 'waiting_approval', 'paused', 'completed', 'rolled_back', 'cancelled'];
/** A release in one of these owns its flag's release rule; at most one per flag and environment. */
export const ACTIVE_STATUSES: readonly ReleaseStatus[] = ['running', 'waiting_approval', 'paused'];

export interface ReleaseStep {
  /** Share of users (1 to 100) served the release's variant while the step runs. */
  percent: number;
  /** The least time the step runs before the next one may start; 0 or absent: no hold. */
  holdSeconds?: number;
  /** The step waits for an approval before it starts. */
  approval?: boolean;
}

export interface MetricGuardrail {
  metric: string;
  /** Users each arm needs before the guardrail may decide (default 100). */
  minUsers?: number;
}

export interface PrometheusGuardrail {
  prometheus: { url: string; query: string; above?: number; below?: number; forSeconds?: number };
}

export type Guardrail = MetricGuardrail | PrometheusGuardrail;

export type GuardrailState = 'healthy' | 'collecting' | 'breached' | 'unknown';

/** What one guardrail says now; `reason` is in words (why it is unknown, what breached). */
export interface GuardrailReading {
  state: GuardrailState;
  reason?: string;
}

/** When each step started and ended, and who approved it (approval steps). */
export interface StepProgress {
  startedAt?: string;
  completedAt?: string;
  approvedBy?: string;
  /** Since when the step is paused (while the release is paused after the step started). */
  pausedAt?: string;
  /** Paused time of the step before now, in milliseconds: the hold does not count it. */
  pausedMs?: number;
}

/** What `nextMove` needs of a release. */
export interface ReleaseState {
  status: ReleaseStatus;
  steps: ReleaseStep[];
  /** Index of the step running (or waiting for its approval). */
  currentStep: number;
  progress: StepProgress[];
}

export type Move =
  | { kind: 'none'; waitingFor?: 'time' | 'users' | 'guardrail' }
  | { kind: 'rollback'; reason: string }
  | { kind: 'wait_approval'; step: number }
  | { kind: 'start_step'; step: number }
  | { kind: 'complete' };

export const DEFAULT_MIN_USERS = 100;
export const MAX_STEPS = 20;
export const MAX_GUARDRAILS = 10;

/**
 * What a running release does next, at `now`, given its guardrails' readings (in the plan's order):
 * - a breached guardrail rolls back (whatever the step), first breach named;
 * - a step ends when its hold has passed, no guardrail is breached or unknown, and none is still collecting
 *   (a step never ends on time alone while its guardrails have seen too few users);
 * - then the next step starts, or waits for its approval; after the last step the release completes.
 * Paused, waiting and ended releases do not move on their own.
 */
export function nextMove(release: ReleaseState, now: Date, readings: readonly GuardrailReading[], guardrailNames: readonly string[] = []): Move {
  if (release.status !== 'running') return { kind: 'none' };
  const breached = readings.findIndex((r) => r.state === 'breached');
  if (breached >= 0) {
    const name = guardrailNames[breached] ?? `guardrail ${breached + 1}`;
    return { kind: 'rollback', reason: readings[breached]!.reason ?? `${name} was breached` };
  }
  const step = release.steps[release.currentStep]!;
  const startedAt = release.progress[release.currentStep]?.startedAt;
  if (!startedAt) return { kind: 'none', waitingFor: 'time' };
  const holdEnds = holdEndsAt(startedAt, step, release.progress[release.currentStep]!);
  if (now.getTime() < holdEnds) return { kind: 'none', waitingFor: 'time' };
  if (readings.some((r) => r.state === 'unknown')) return { kind: 'none', waitingFor: 'guardrail' };
  if (readings.some((r) => r.state === 'collecting')) return { kind: 'none', waitingFor: 'users' };
  const next = release.currentStep + 1;
  if (next >= release.steps.length) return { kind: 'complete' };
  if (release.steps[next]!.approval && !release.progress[next]?.approvedBy) return { kind: 'wait_approval', step: next };
  return { kind: 'start_step', step: next };
}

/**
 * When a started step's hold ends (ms since the epoch): its start, plus its hold, plus the time it was
 * paused (a pause stops the hold's clock; the pause in course counts up to `now` when given).
 */
export function holdEndsAt(startedAt: string, step: ReleaseStep, progress: StepProgress, now?: Date): number {
  const pausing = progress.pausedAt && now ? Math.max(0, now.getTime() - Date.parse(progress.pausedAt)) : 0;
  return Date.parse(startedAt) + (step.holdSeconds ?? 0) * 1000 + (progress.pausedMs ?? 0) + pausing;
}

/** The step's progress once a pause begins at `at` (only a started step's hold is stopped). */
export function pauseProgress(progress: StepProgress, at: string): StepProgress {
  return progress.startedAt && !progress.completedAt && !progress.pausedAt ? { ...progress, pausedAt: at } : progress;
}

/** The step's progress once its pause ends at `at`: the paused time is added to what the hold does not count. */
export function resumeProgress(progress: StepProgress, at: string): StepProgress {
  if (!progress.pausedAt) return progress;
  const { pausedAt, ...rest } = progress;
  return { ...rest, pausedMs: (progress.pausedMs ?? 0) + Math.max(0, Date.parse(at) - Date.parse(pausedAt)) };
}

/** The problems of a plan for a flag with `variants`, as `field: problem` (empty when it is valid). */
export function planProblems(
  plan: { variant: string; baseline: string; steps: ReleaseStep[]; guardrails: Guardrail[] },
  variants: readonly string[],
): string[] {
  const problems: string[] = [];
  if (!variants.includes(plan.variant)) problems.push(`variant: the flag has no variant '${plan.variant}'`);
  if (!variants.includes(plan.baseline)) problems.push(`baseline: the flag has no variant '${plan.baseline}'`);
  if (plan.variant === plan.baseline) problems.push('baseline: must differ from variant');
  if (plan.steps.length === 0) problems.push('steps: at least one step is needed');
  if (plan.steps.length > MAX_STEPS) problems.push(`steps: at most ${MAX_STEPS} steps`);
  plan.steps.forEach((step, i) => {
    if (!Number.isInteger(step.percent) || step.percent < 1 || step.percent > 100) problems.push(`steps[${i}].percent: an integer from 1 to 100`);
    else if (i > 0 && step.percent <= plan.steps[i - 1]!.percent) problems.push(`steps[${i}].percent: must be more than the step before`);
    if (step.holdSeconds !== undefined && (!Number.isInteger(step.holdSeconds) || step.holdSeconds < 0))
      problems.push(`steps[${i}].holdSeconds: a whole number of seconds, 0 or more`);
  });
  const last = plan.steps[plan.steps.length - 1];
  if (last && last.percent !== 100) problems.push(`steps[${plan.steps.length - 1}].percent: the last step serves 100 percent`);
  if (plan.guardrails.length > MAX_GUARDRAILS) problems.push(`guardrails: at most ${MAX_GUARDRAILS}`);
  plan.guardrails.forEach((g, i) => {
    if ('prometheus' in g) {
      const { above, below, forSeconds } = g.prometheus;
      if ((above === undefined) === (below === undefined)) problems.push(`guardrails[${i}].prometheus: exactly one of above and below`);
      if (forSeconds !== undefined && (!Number.isInteger(forSeconds) || forSeconds < 0)) problems.push(`guardrails[${i}].prometheus.forSeconds: 0 or more`);
    } else if (g.minUsers !== undefined && (!Number.isInteger(g.minUsers) || g.minUsers < 1)) {
      problems.push(`guardrails[${i}].minUsers: a whole number, 1 or more`);
    }
  });
  return problems;
}

/** The id of the rule a release owns in its flag's targeting; the engine names the release from it. */
export function releaseRuleId(releaseId: string): string {
  return `release-${releaseId}`;
}

/**
 * The release's rule: no conditions, `variant` to `percent` % and `baseline` to the rest, bucketed by
 * targeting key. The variant is listed first so that a user served it keeps it as its weight only grows
 * (flagd's fractional buckets fill in the order of the weights).
 */
export function releaseRule(releaseId: string, variant: string, baseline: string, percent: number): Rule {
  return {
    id: releaseRuleId(releaseId),
    name: `Release of ${variant}`,
    enabled: true,
    conditions: [],
    segments: [],
    serve: {
      split: {
        bucketing: 'flagd-fractional-v2',
        weights: [
          { variant, weight: percent },
          { variant: baseline, weight: 100 - percent },
        ],
      },
    },
  };
}

/** Percentages for the reasons written to people: means to one decimal ("5.1 %"), lifts to three digits ("+484 %"). */
function percent(value: number, signed = false): string {
  const text = signed ? `${Number((value * 100).toPrecision(3))} %` : `${(value * 100).toFixed(1)} %`;
  return signed && value >= 0 ? `+${text}` : text;
}

/**
 * Why a metric guardrail rolled back, in words and numbers: "error-rate rose from 5.1 % to 29.8 %, +484 %
 * (+380 % to +590 %)". Means of proportion metrics read as percentages, others as numbers.
 */
export function breachReason(
  metric: string,
  type: 'proportion' | 'mean' | 'ratio',
  baselineMean: number,
  variantMean: number,
  relativeLift: number,
  interval: readonly [number, number],
): string {
  const verb = variantMean >= baselineMean ? 'rose' : 'fell';
  const value = (v: number) => (type === 'proportion' ? percent(v) : String(Number(v.toPrecision(4))));
  return `${metric} ${verb} from ${value(baselineMean)} to ${value(variantMean)}, ${percent(relativeLift, true)} (${percent(interval[0], true)} to ${percent(interval[1], true)})`;
}
