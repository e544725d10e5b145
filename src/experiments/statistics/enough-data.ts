import { checkStatistic, type MetricStatistic, meanOf, varianceOf } from './metric-statistic.ts';

/** The default bound on each arm's relative standard error (about 25 converted users of a proportion). */
export const DEFAULT_MAX_RELATIVE_ERROR = 0.2;

/**
 * Whether both arms' means are known well enough for the normal approximation that every interval of
 * compare() rests on: each arm's relative standard error, stddev / (√n · mean), is at most
 * `maxRelativeError`. Not part of gbstats: Flagpost's rule for decisions taken at every look
 * (guardrails), where an arm with a handful of converted users otherwise passes the sequential
 * interval's 5 % by far (ADR 0043 gives the figures). For a proportion it asks for about
 * (1 − p) / maxRelativeError² converted users per arm.
 */
export function hasEnoughData(baseline: MetricStatistic, variant: MetricStatistic, options: { maxRelativeError?: number } = {}): boolean {
  const maxRelativeError = options.maxRelativeError ?? DEFAULT_MAX_RELATIVE_ERROR;
  if (!(maxRelativeError > 0)) throw new RangeError(`hasEnoughData: maxRelativeError must be positive, got ${maxRelativeError}`);
  return [baseline, variant].every((stat) => {
    checkStatistic(stat);
    const mean = meanOf(stat);
    const variance = varianceOf(stat);
    if (stat.n === 0 || mean <= 0 || variance <= 0) return false;
    return Math.sqrt(variance / stat.n) / mean <= maxRelativeError;
  });
}
