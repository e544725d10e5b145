// The sufficient statistics of one variant's per-user values, and what gbstats (0.8.0,
// gbstats/models/statistics.py) derives from them: ProportionStatistic, SampleMeanStatistic and
// RatioStatistic. Variances are per user (the variance of one user's value), as gbstats keeps them.

/** One variant's per-user values of a metric, reduced to sums. */
export type MetricStatistic =
  /** sum = users with the event (each user's value is 0 or 1). */
  | { kind: 'proportion'; n: number; sum: number }
  /** Per-user values: their sum and the sum of their squares. */
  | { kind: 'mean'; n: number; sum: number; sumSquares: number }
  /** Per-user numerator and denominator values, their squares and the sum of their products. */
  | {
      kind: 'ratio';
      n: number;
      numeratorSum: number;
      numeratorSumSquares: number;
      denominatorSum: number;
      denominatorSumSquares: number;
      sumOfProducts: number;
    };

/** What a results table shows of one variant. */
export interface Summary {
  users: number;
  /** Ratio: numeratorSum / denominatorSum (0 when the denominator is 0). */
  mean: number;
  /** The per-user standard deviation as gbstats reports it (ratio: the delta method's). */
  stddev: number;
}

/**
 * Refuses sums no per-user data could give (a programming error upstream, never a client's): a count
 * of users that is not a whole number from 0, a sum that is not finite, more converted users than users.
 */
export function checkStatistic(stat: MetricStatistic): void {
  const sums = Object.entries(stat).filter(([key]) => key !== 'kind');
  const bad = sums.find(([, value]) => typeof value !== 'number' || !Number.isFinite(value));
  if (bad) throw new RangeError(`${stat.kind} statistic: ${bad[0]} is ${String(bad[1])}`);
  if (!Number.isInteger(stat.n) || stat.n < 0) throw new RangeError(`${stat.kind} statistic: n is ${stat.n}`);
  if (stat.kind === 'proportion' && (stat.sum < 0 || stat.sum > stat.n)) throw new RangeError(`proportion statistic: sum ${stat.sum} of ${stat.n} users`);
}

/** SampleMeanStatistic.mean and ProportionStatistic.mean. */
const sampleMean = (n: number, sum: number): number => (n === 0 ? 0 : sum / n);

/** SampleMeanStatistic.variance: the sample variance (n - 1), 0 below two users. */
const sampleVariance = (n: number, sum: number, sumSquares: number): number => (n <= 1 ? 0 : (sumSquares - (sum * sum) / n) / (n - 1));

/** The mean gbstats compares: a ratio metric's is the ratio of the sums. */
export function meanOf(stat: MetricStatistic): number {
  switch (stat.kind) {
    case 'proportion':
    case 'mean':
      return sampleMean(stat.n, stat.sum);
    case 'ratio':
      return stat.denominatorSum === 0 ? 0 : stat.numeratorSum / stat.denominatorSum;
  }
}

/**
 * The per-user variance: p(1 - p) for a proportion (no n - 1), the sample variance for a mean, and for
 * a ratio M/D the delta method's Var(M)/μD² − 2·Cov(M,D)·μM/μD³ + μM²·Var(D)/μD⁴ with the per-user
 * means μ and the sample (n - 1) variances and covariance; 0 below two users or with μD = 0.
 */
export function varianceOf(stat: MetricStatistic): number {
  switch (stat.kind) {
    case 'proportion': {
      const p = sampleMean(stat.n, stat.sum);
      return p * (1 - p);
    }
    case 'mean':
      return sampleVariance(stat.n, stat.sum, stat.sumSquares);
    case 'ratio': {
      const { n } = stat;
      const meanD = sampleMean(n, stat.denominatorSum);
      if (meanD === 0 || n <= 1) return 0;
      const meanM = sampleMean(n, stat.numeratorSum);
      const varM = sampleVariance(n, stat.numeratorSum, stat.numeratorSumSquares);
      const varD = sampleVariance(n, stat.denominatorSum, stat.denominatorSumSquares);
      const covariance = (stat.sumOfProducts - (stat.numeratorSum * stat.denominatorSum) / n) / (n - 1);
      return varM / meanD ** 2 - (2 * covariance * meanM) / meanD ** 3 + (meanM ** 2 * varD) / meanD ** 4;
    }
  }
}

/** Statistic.stddev: 0 when the variance is not positive. */
const stddevOf = (variance: number): number => (variance <= 0 ? 0 : Math.sqrt(variance));

/** One variant's row of a results table, as gbstats reports it (users, mean, stddev). */
export function summarize(stat: MetricStatistic): Summary {
  checkStatistic(stat);
  return { users: stat.n, mean: meanOf(stat), stddev: stddevOf(varianceOf(stat)) };
}
