import type { GuardrailView } from './guardrail-readers.ts';
import { ACTIVE_STATUSES, holdEndsAt, nextMove } from './release.ts';
import type { Release, ReleaseTemplate } from './release.store.ts';

/** The share of users served the variant now: the current step's once it started, else the step before's. */
export function servedPercent(r: Release): number {
  if (r.status === 'completed') return 100;
  if (r.status === 'rolled_back' || r.status === 'cancelled') return 0;
  for (let i = r.currentStep; i >= 0; i--) if (r.progress[i]?.startedAt) return r.steps[i]!.percent;
  return 0;
}

/** What an active release waits for at `now`: time, an approval, users, or a guardrail that cannot be read. */
export function waitingFor(r: Release, now: Date): 'time' | 'approval' | 'users' | 'guardrail' | undefined {
  if (r.status === 'waiting_approval') return 'approval';
  if (r.status !== 'running') return undefined;
  const readings = r.guardrails.map((_, i) => r.readings[i] ?? { state: 'collecting' as const });
  const move = nextMove(r, now, readings);
  return move.kind === 'none' ? move.waitingFor : undefined;
}

const readingView = (reading: GuardrailView | undefined, prometheus: boolean): GuardrailView => {
  if (!reading) return prometheus ? { state: 'unknown', reason: 'not read yet' } : { state: 'collecting', reason: 'not read yet' };
  const { pastThresholdSince: _since, ...shown } = reading;
  return shown;
};

/** When the hold of an active release's running step ends (paused time not counted; a pause in course moves it on), or null. */
function holdEndOf(r: Release, i: number, now: Date): string | null {
  const progress = r.progress[i];
  if (!progress?.startedAt || progress.completedAt || !ACTIVE_STATUSES.includes(r.status)) return null;
  return new Date(holdEndsAt(progress.startedAt, r.steps[i]!, progress, now)).toISOString();
}

/** A release as the admin API answers it (issue 33). */
export function releaseView(r: Release, now: Date) {
  const waiting = waitingFor(r, now);
  return {
    id: r.id,
    flag: r.flagSlug,
    status: r.status,
    variant: r.variant,
    baseline: r.baseline,
    currentStep: r.currentStep,
    percent: servedPercent(r),
    ...(waiting ? { waitingFor: waiting } : {}),
    steps: r.steps.map((s, i) => ({
      ...s,
      startedAt: r.progress[i]?.startedAt ?? null,
      completedAt: r.progress[i]?.completedAt ?? null,
      holdEndsAt: holdEndOf(r, i, now),
      ...(r.progress[i]?.approvedBy ? { approvedBy: r.progress[i]!.approvedBy } : {}),
    })),
    guardrails: r.guardrails.map((g, i) => ({ ...g, ...readingView(r.readings[i], 'prometheus' in g) })),
    template: r.templateKey,
    ...(r.rolledBackReason ? { rolledBackReason: r.rolledBackReason } : {}),
    createdBy: r.createdBy.label,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export const templateView = (t: ReleaseTemplate) => ({
  key: t.key,
  name: t.name,
  steps: t.steps,
  guardrails: t.guardrails,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
});
