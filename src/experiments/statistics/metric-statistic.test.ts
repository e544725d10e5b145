import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type MetricStatistic, summarize } from './index.ts';

// gbstats 0.8.0's tests/test_shared_models.py (growthbook/growthbook at c6b15529f6): METRIC_1,
// METRIC_2 and METRIC_3 with N = 4. gbstats checks its sums against numpy on the raw values, and so
// does this table (two-pass formulas on the same values).

const mean = (n: number, sum: number, sumSquares: number): MetricStatistic => ({ kind: 'mean', n, sum, sumSquares });
const proportion = (n: number, sum: number): MetricStatistic => ({ kind: 'proportion', n, sum });
const ratio = (
  n: number,
  numeratorSum: number,
  numeratorSumSquares: number,
  denominatorSum: number,
  denominatorSumSquares: number,
  sumOfProducts: number,
): MetricStatistic => ({ kind: 'ratio', n, numeratorSum, numeratorSumSquares, denominatorSum, denominatorSumSquares, sumOfProducts });
const assertClose = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= 1e-12, `${what}: ${actual} is not ${expected}`);

describe('summarize: a variant as gbstats reports it (users, mean, stddev)', () => {
  const METRIC_1 = [0.3, 0.5, 0.9, 22];
  const METRIC_3 = [2, 1, 5, 3];
  const total = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  const avg = (xs: number[]) => total(xs) / xs.length;
  const covariance = (xs: number[], ys: number[]) => total(xs.map((x, i) => (x - avg(xs)) * (ys[i]! - avg(ys)))) / (xs.length - 1);
  const squares = (xs: number[]) => total(xs.map((x) => x * x));
  const metric1 = mean(4, total(METRIC_1), squares(METRIC_1));

  it('test_shared_models.py › TestSampleMeanStatistic.test_sample_mean_statistic: mean and ddof=1 variance', () => {
    const summary = summarize(metric1);
    assert.equal(summary.users, 4);
    assertClose(summary.mean, avg(METRIC_1), 'mean');
    assertClose(summary.stddev, Math.sqrt(covariance(METRIC_1, METRIC_1)), 'stddev');
  });

  it('test_shared_models.py › TestSampleMeanStatistic.test_sample_mean_statistic_low_n: no variance with one user', () => {
    assert.equal(summarize(mean(1, total(METRIC_1), squares(METRIC_1))).stddev, 0);
  });

  it('test_shared_models.py › TestProportionStatistic.test_proportion_statistic: p(1 - p), no n - 1', () => {
    const summary = summarize(proportion(4, 3));
    assert.equal(summary.mean, 0.75);
    assertClose(summary.stddev, Math.sqrt(0.75 * 0.25), 'stddev');
  });

  it('test_shared_models.py › TestRatioStatistic: the delta method on the ratio of means, with numpy-style covariance', () => {
    const stat = ratio(4, total(METRIC_1), squares(METRIC_1), total(METRIC_3), squares(METRIC_3), total(METRIC_1.map((x, i) => x * METRIC_3[i]!)));
    const [mM, mD] = [avg(METRIC_1), avg(METRIC_3)];
    const variance =
      covariance(METRIC_1, METRIC_1) / mD ** 2 - (2 * covariance(METRIC_1, METRIC_3) * mM) / mD ** 3 + (mM ** 2 * covariance(METRIC_3, METRIC_3)) / mD ** 4;
    const summary = summarize(stat);
    assertClose(summary.mean, total(METRIC_1) / total(METRIC_3), 'mean');
    assertClose(summary.stddev, Math.sqrt(variance), 'stddev');
  });

  it('test_shared_models.py › TestRatioStatistic.test_ratio_denom_zero: no variance and mean 0 without a denominator', () => {
    const summary = summarize(ratio(4, total(METRIC_1), squares(METRIC_1), 0, squares(METRIC_3), 7));
    assert.deepEqual(summary, { users: 4, mean: 0, stddev: 0 });
  });

  it('refuses sums no per-user data could give', () => {
    assert.throws(() => summarize(mean(-1, 0, 0)), RangeError);
    assert.throws(() => summarize(mean(2.5, 1, 1)), RangeError);
    assert.throws(() => summarize(mean(3, Number.NaN, 1)), RangeError);
    assert.throws(() => summarize(ratio(3, 1, 1, 1, 1, Number.POSITIVE_INFINITY)), RangeError);
    assert.throws(() => summarize(proportion(3, 4)), RangeError);
    assert.throws(() => summarize(proportion(3, -1)), RangeError);
    assert.deepEqual(summarize(proportion(0, 0)), { users: 0, mean: 0, stddev: 0 });
  });
});
