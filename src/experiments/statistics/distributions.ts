import gammainc from '@stdlib/math-base-special-gammainc';
import normalCdf from '@stdlib/stats-base-dists-normal-cdf';
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import tCdf from '@stdlib/stats-base-dists-t-cdf';
import tQuantile from '@stdlib/stats-base-dists-t-quantile';

// The distributions gbstats takes from scipy.stats, from stdlib's ports of the same algorithms
// (Boost and Cephes): no special function is written here.

/** P(T <= x) for Student's t with `dof` degrees of freedom (scipy's t.cdf). */
export const studentTCdf = (x: number, dof: number): number => tCdf(x, dof);

/** The p-quantile of Student's t with `dof` degrees of freedom (scipy's t.ppf). */
export const studentTQuantile = (p: number, dof: number): number => tQuantile(p, dof);

/** P(X <= x) for a normal distribution (scipy's norm.cdf). */
export const normalDistributionCdf = (x: number, mean: number, stddev: number): number => normalCdf(x, mean, stddev);

/** The p-quantile of a normal distribution (scipy's norm.ppf). */
export const normalDistributionQuantile = (p: number, mean: number, stddev: number): number => normalQuantile(p, mean, stddev);

/**
 * P(X > x) for chi-squared with `dof` degrees of freedom (scipy's chi2.sf): the regularized upper
 * incomplete gamma function Q(dof / 2, x / 2), which keeps its precision far into the tail.
 */
export const chiSquaredSurvival = (x: number, dof: number): number => gammainc(x / 2, dof / 2, true, true);
