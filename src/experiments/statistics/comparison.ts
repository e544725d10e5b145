import { normalDistributionCdf, studentTCdf, studentTQuantile } from './distributions.ts';
import { checkStatistic, type MetricStatistic, meanOf, varianceOf } from './metric-statistic.ts';

// A variant against the baseline, as gbstats 0.8.0 computes it with its defaults (ADR 0043):
// TwoSidedTTest and SequentialTwoSidedTTest (gbstats/frequentist/tests.py) and EffectBayesianABTest
// with its flat improper prior (gbstats/bayesian/tests.py), all on the relative difference.

/** A variant against the baseline; nulls where gbstats gives no result (see compare). */
export interface Comparison {
  /** (variant mean − baseline mean) / baseline mean. */
  relativeLift: number | null;
  /** Welch's two-sided t interval of the relative lift at 1 − alpha. */
  ci95: [number, number] | null;
  /** Welch's two-sided t-test of no difference. */
  pValue: number | null;
  /** The posterior probability that the variant is better (in the metric's direction). */
  chanceToWin: number | null;
  /** An interval of the relative lift that stays valid however often it is looked at (1 − alpha). */
  sequentialCi95: [number, number] | null;
  /** ci95 excludes zero. */
  significant: boolean;
}

export interface CompareOptions {
  /** The tests' alpha: 0.05 gives 95 % intervals. */
  alpha?: number;
  /** gbstats' sequential_tuning_parameter: the total users at which the sequential interval is tightest. */
  sequentialTuning?: number;
  /** Whether a higher or a lower value is better (gbstats' `inverse` for 'decrease'); only chanceToWin depends on it. */
  direction?: 'increase' | 'decrease';
}

const DEFAULT_ALPHA = 0.05;
const DEFAULT_SEQUENTIAL_TUNING = 5000;

/** The relative lift and its delta-method variance (frequentist_diff, frequentist_variance). */
interface RelativeEffect {
  estimate: number;
  variance: number;
  /** Welch–Satterthwaite degrees of freedom (TTest.dof). */
  dof: number;
  /** Users in both variants (the sequential interval's N). */
  users: number;
}

/**
 * The relative effect, or undefined where gbstats answers with its default output: a baseline mean
 * of 0 (BASELINE_VARIATION_ZERO_MESSAGE), a variant without users, or a variance that is not positive
 * in either variant (ZERO_NEGATIVE_VARIANCE_MESSAGE: one user, all values equal, a ratio's zero
 * denominator).
 */
function relativeEffect(baseline: MetricStatistic, variant: MetricStatistic): RelativeEffect | undefined {
  const meanA = meanOf(baseline);
  const meanB = meanOf(variant);
  const varA = varianceOf(baseline);
  const varB = varianceOf(variant);
  const nA = baseline.n;
  const nB = variant.n;
  if (meanA === 0 || nA === 0 || nB === 0 || varA <= 0 || varB <= 0) return undefined;
  return {
    estimate: (meanB - meanA) / meanA,
    // The delta method for (mB − mA) / mA with independent means: Var(mB)/mA² + mB²·Var(mA)/mA⁴.
    variance: varB / (meanA ** 2 * nB) + (varA * meanB ** 2) / (meanA ** 4 * nA),
    // Welch–Satterthwaite on the variants' per-user variances (as gbstats, not on the relative scale).
    dof: (varB / nB + varA / nA) ** 2 / (varB ** 2 / (nB ** 2 * (nB - 1)) + varA ** 2 / (nA ** 2 * (nA - 1))),
    users: nA + nB,
  };
}

/** TwoSidedTTest: the interval and the p-value of Student's t with Welch's degrees of freedom. */
function twoSidedTTest(effect: RelativeEffect, alpha: number): { ci: [number, number]; pValue: number } {
  const standardError = Math.sqrt(effect.variance);
  const width = studentTQuantile(1 - alpha / 2, effect.dof) * standardError;
  const statistic = Math.abs(effect.estimate / standardError);
  return { ci: [effect.estimate - width, effect.estimate + width], pValue: 2 * studentTCdf(-statistic, effect.dof) };
}

/**
 * SequentialTwoSidedTTest: the asymptotic confidence sequence of Waudby-Smith et al. (2023, eq. 9,
 * arXiv 2103.06476v7), with ρ from its eq. 161 chosen so that the interval is tightest at `tuning`
 * total users. With N users and s² = N·Var(lift):
 * half-width = √s² · √( 2(Nρ² + 1) · ln(√(Nρ² + 1) / alpha) / (Nρ)² ).
 */
function sequentialInterval(effect: RelativeEffect, alpha: number, tuning: number): [number, number] {
  const rho = Math.sqrt((-2 * Math.log(alpha) + Math.log(-2 * Math.log(alpha) + 1)) / tuning);
  const n = effect.users;
  const nRho2 = n * rho ** 2;
  const s2 = effect.variance * n;
  const width = Math.sqrt(s2) * Math.sqrt((2 * (nRho2 + 1) * Math.log(Math.sqrt(nRho2 + 1) / alpha)) / (n * rho) ** 2);
  return [effect.estimate - width, effect.estimate + width];
}

/**
 * EffectBayesianABTest with the default prior (GaussianPrior(proper=False), a flat improper prior):
 * the posterior of the relative lift is normal with the data's mean and variance, and the chance to
 * win is its mass above zero (below zero for a metric that should decrease).
 */
function chanceToWin(effect: RelativeEffect, direction: 'increase' | 'decrease'): number {
  const better = direction === 'increase' ? effect.estimate : -effect.estimate;
  return normalDistributionCdf(better, 0, Math.sqrt(effect.variance));
}

function checkOptions(alpha: number, tuning: number): void {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`compare: alpha must be between 0 and 1, got ${alpha}`);
  if (!(tuning > 0 && Number.isFinite(tuning))) throw new RangeError(`compare: sequentialTuning must be positive, got ${tuning}`);
}

/**
 * A variant against the baseline, as gbstats computes it. Where gbstats gives no result (a baseline
 * mean of 0, a variant without users, a variance that is not positive), and for a baseline mean below
 * 0 (where the relative lift's sign is the opposite of the change: ADR 0043's one departure), ci95, pValue,
 * chanceToWin and sequentialCi95 are null; relativeLift is then still the plain relative difference
 * of the means when the baseline mean is positive, as gbstats' runner reports it ("expected").
 */
export function compare(baseline: MetricStatistic, variant: MetricStatistic, options: CompareOptions = {}): Comparison {
  const alpha = options.alpha ?? DEFAULT_ALPHA;
  const tuning = options.sequentialTuning ?? DEFAULT_SEQUENTIAL_TUNING;
  checkOptions(alpha, tuning);
  if (baseline.kind !== variant.kind) throw new TypeError(`compare: a ${baseline.kind} baseline against a ${variant.kind} variant`);
  checkStatistic(baseline);
  checkStatistic(variant);
  const meanA = meanOf(baseline);
  // gbstats' runner reports no lift for a baseline mean of 0 or below (the relative scale has no sign then).
  const effect = meanA > 0 ? relativeEffect(baseline, variant) : undefined;
  if (!effect) {
    const relativeLift = meanA > 0 ? (meanOf(variant) - meanA) / meanA : null;
    return { relativeLift, ci95: null, pValue: null, chanceToWin: null, sequentialCi95: null, significant: false };
  }
  const { ci, pValue } = twoSidedTTest(effect, alpha);
  return {
    relativeLift: effect.estimate,
    ci95: ci,
    pValue,
    chanceToWin: chanceToWin(effect, options.direction ?? 'increase'),
    sequentialCi95: sequentialInterval(effect, alpha, tuning),
    significant: ci[0] > 0 || ci[1] < 0,
  };
}
