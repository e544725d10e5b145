import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Comparison, type CompareOptions, compare, type MetricStatistic, summarize } from './index.ts';

// Every expected number below is published in gbstats' own tests (growthbook/growthbook, package
// packages/stats at c6b15529f6, the commit that made it gbstats 0.8.0), cited per row as
// file › class.case. gbstats rounds to 5 decimals (tests/frequentist, tests/bayesian) or 9
// (tests/test_gbstats.py); each row is checked at the precision its source publishes. A value that
// gbstats gives as its default output (p-value 1, chance to win 0.5, interval [0, 0]) is null here.

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

// tests/test_gbstats.py fixtures: MULTI_DIMENSION_STATISTICS_DF and RATIO_STATISTICS_DF, dimension
// "one" (baseline "zero", variant "one"), ONE_USER_DF and ZERO_DENOM_RATIO_STATISTICS_DF.
const multiZero = mean(100, 270, 848.79);
const multiOne = mean(120, 300, 869);
const ratioZero = ratio(100, 270, 848.79, 510, 810, -900);
const ratioOne = ratio(120, 300, 869, 500, 800, -905);
const oneUserZero = mean(3, 20, 443);
const oneUserOne = mean(1, 1, 1);
const zeroDenominator = ratio(100, 270, 848.79, 0, 0, 0);
// tests/frequentist/test_tests.py fixtures.
const tA = mean(3407, 1396.87, 52377.9767);
const tB = mean(3461, 2422.7, 134698.29);
const sA = mean(3000, 1396.87, 52377.9767);

type Expected = { [K in keyof Comparison]?: Comparison[K] };
interface Row {
  source: string;
  baseline: MetricStatistic;
  variant: MetricStatistic;
  options?: CompareOptions;
  expected: Expected;
  decimals: number;
}

const NO_RESULT = { ci95: null, pValue: null, chanceToWin: null, sequentialCi95: null, significant: false };

const rows: Row[] = [
  {
    source: 'frequentist/test_tests.py › TestTwoSidedTTest.test_two_sided_ttest',
    baseline: tA,
    variant: tB,
    expected: { relativeLift: 0.70732, ci95: [-0.03526, 1.44989], pValue: 0.06191, significant: false },
    decimals: 5,
  },
  {
    source: 'frequentist/test_tests.py › TestTwoSidedTTest.test_two_sided_ttest_binom',
    baseline: proportion(28, 14),
    variant: proportion(30, 16),
    expected: { relativeLift: 0.06667, ci95: [-0.47767, 0.61101], pValue: 0.80707, significant: false },
    decimals: 5,
  },
  {
    // Two baseline users whose sums give a negative variance: gbstats' default output; its runner
    // (gbstats.py analyze_metric_df) still reports the plain relative difference as "expected".
    source: 'frequentist/test_tests.py › TestTwoSidedTTest.test_two_sided_ttest_missing_variance',
    baseline: mean(2, 1396.87, 52377.9767),
    variant: tB,
    expected: { relativeLift: (2422.7 / 3461 - 1396.87 / 2) / (1396.87 / 2), ...NO_RESULT },
    decimals: 9,
  },
  {
    source: 'frequentist/test_tests.py › TestSequentialTTest.test_sequential_test_runs (tuning 1000)',
    baseline: sA,
    variant: tB,
    options: { sequentialTuning: 1000 },
    expected: { relativeLift: 0.50336, sequentialCi95: [-0.55844, 1.56516] },
    decimals: 5,
  },
  {
    source: 'frequentist/test_tests.py › TestSequentialTTest.test_sequential_test_runs_prop (default tuning 5000)',
    baseline: proportion(3000, 1396),
    variant: proportion(3461, 2422),
    expected: { relativeLift: 0.50386, sequentialCi95: [0.40098, 0.60675], significant: true },
    decimals: 5,
  },
  {
    source: 'bayesian/test_tests.py › TestBinom.test_bayesian_binomial_ab_test',
    baseline: proportion(100, 49),
    variant: proportion(100, 51),
    expected: { relativeLift: 0.04082, chanceToWin: 0.60918 },
    decimals: 5,
  },
  {
    source: 'bayesian/test_tests.py › TestBinom.test_missing_data',
    baseline: proportion(0, 0),
    variant: proportion(0, 0),
    expected: { relativeLift: null, ...NO_RESULT },
    decimals: 5,
  },
  {
    source: 'bayesian/test_tests.py › TestNorm.test_bayesian_gaussian_ab_test',
    baseline: mean(10, 100, 1002.25),
    variant: mean(10, 105, 1111.5),
    expected: { relativeLift: 0.05, chanceToWin: 0.91923 },
    decimals: 5,
  },
  {
    source: 'bayesian/test_tests.py › TestNorm.test_missing_data',
    baseline: mean(0, 0, 0),
    variant: mean(0, 0, 0),
    expected: { relativeLift: null, ...NO_RESULT },
    decimals: 5,
  },
  {
    source: 'test_gbstats.py › TestAnalyzeMetricDfBayesian.test_get_metric_df_new',
    baseline: multiZero,
    variant: multiOne,
    expected: { relativeLift: -0.074074074, chanceToWin: 0.071834168 },
    decimals: 9,
  },
  {
    source: 'test_gbstats.py › TestAnalyzeMetricDfBayesian.test_get_metric_df_inverse',
    baseline: multiZero,
    variant: multiOne,
    options: { direction: 'decrease' },
    expected: { relativeLift: -0.074074074, chanceToWin: 1 - 0.071834168 },
    decimals: 9,
  },
  {
    source: 'test_gbstats.py › TestAnalyzeMetricDfFrequentist.test_get_metric_df_frequentist',
    baseline: multiZero,
    variant: multiOne,
    expected: { relativeLift: -0.074074074, pValue: 0.145219005, significant: false },
    decimals: 9,
  },
  {
    source: 'test_gbstats.py › TestAnalyzeMetricDfBayesian.test_get_metric_df_bayesian_ratio',
    baseline: ratioZero,
    variant: ratioOne,
    expected: { relativeLift: 0.133333333, chanceToWin: 0.694926359 },
    decimals: 9,
  },
  {
    source: 'test_gbstats.py › TestAnalyzeMetricDfFrequentist.test_get_metric_df_frequentist_ratio',
    baseline: ratioZero,
    variant: ratioOne,
    expected: { relativeLift: 0.133333333, pValue: 0.610663339 },
    decimals: 9,
  },
  {
    source: 'test_gbstats.py › TestAnalyzeMetricDf{Bayesian,Frequentist}.test_get_metric_df_zero_val (one user)',
    baseline: oneUserZero,
    variant: oneUserOne,
    expected: { relativeLift: -0.85, ...NO_RESULT },
    decimals: 9,
  },
  {
    source: 'test_gbstats.py › TestAnalyzeMetricDf{Bayesian,Frequentist}.test_get_metric_df_ratio_zero_denom',
    baseline: zeroDenominator,
    variant: ratioOne,
    expected: { relativeLift: null, ...NO_RESULT },
    decimals: 9,
  },
  {
    source: 'test_gbstats.py › TestAnalyzeMetricDfSequential.test_analyze_metric_df_sequential (tuning 600)',
    baseline: multiZero,
    variant: multiOne,
    options: { sequentialTuning: 600 },
    expected: { relativeLift: -0.074074074 },
    decimals: 9,
  },
];

function assertClose(actual: number | null, expected: number | null, decimals: number, what: string): void {
  if (expected === null || actual === null) return assert.equal(actual, expected, what);
  assert.ok(Math.abs(actual - expected) <= 0.5 * 10 ** -decimals + 1e-12, `${what}: ${actual} is not ${expected} to ${decimals} decimals`);
}

describe('compare: a variant against the baseline reproduces gbstats 0.8.0 published cases', () => {
  for (const row of rows) {
    it(row.source, () => {
      const result = compare(row.baseline, row.variant, row.options);
      for (const [field, expected] of Object.entries(row.expected) as Array<[keyof Comparison, Comparison[keyof Comparison]]>) {
        const actual = result[field];
        if (typeof expected === 'boolean') assert.equal(actual, expected, field);
        else if (Array.isArray(expected)) {
          assert.ok(Array.isArray(actual), `${field} is ${String(actual)}`);
          expected.forEach((bound, i) => assertClose((actual as [number, number])[i]!, bound, row.decimals, `${field}[${i}]`));
        } else assertClose(actual as number | null, expected as number | null, row.decimals, field);
      }
    });
  }

  it('test_gbstats.py › TestAnalyzeMetricDfSequential: the lower sequential bound at tuning 600, wider at tuning 1', () => {
    const tuned = compare(multiZero, multiOne, { sequentialTuning: 600 }).sequentialCi95!;
    assertClose(tuned[0], -0.233322085, 9, 'sequentialCi95[0]');
    assert.ok(tuned[0] > compare(multiZero, multiOne, { sequentialTuning: 1 }).sequentialCi95![0]);
  });

  it('frequentist/test_tests.py › TestSequentialTTest.test_sequential_test_tuning_as_expected: tightest near the users seen', () => {
    const [below, near, above] = [10, 6461, 10000].map((sequentialTuning) => compare(sA, tB, { sequentialTuning }).sequentialCi95!);
    assert.ok(below![0] < above![0] && below![1] > above![1], 'a tuning far below N is wider than one above');
    assert.ok(below![0] < near![0] && below![1] > near![1], 'a tuning near N is tighter than one far below');
    assert.ok(above![0] < near![0] && above![1] > near![1], 'a tuning near N is tighter than one above');
  });

  it('keeps the sequential interval wider than the fixed-horizon one (it pays for peeking)', () => {
    const result = compare(tA, tB);
    assert.ok(result.sequentialCi95![0] < result.ci95![0] && result.sequentialCi95![1] > result.ci95![1]);
  });

  it('calls a result significant exactly when ci95 excludes zero', () => {
    const win = compare(proportion(3000, 1396), proportion(3461, 2422));
    assert.equal(win.significant, true);
    assert.ok(win.ci95![0] > 0);
    const loss = compare(proportion(3461, 2422), proportion(3000, 1396));
    assert.equal(loss.significant, true);
    assert.ok(loss.ci95![1] < 0);
    assert.equal(compare(tA, tB).significant, false);
  });

  it('narrows the interval with alpha as gbstats does (alpha 0.2 gives 80 % intervals)', () => {
    const wide = compare(tA, tB).ci95!;
    const narrow = compare(tA, tB, { alpha: 0.2 }).ci95!;
    assert.ok(narrow[0] > wide[0] && narrow[1] < wide[1]);
  });

  it('refuses a baseline and a variant of different kinds, impossible sums and options out of range', () => {
    assert.throws(() => compare(proportion(10, 5), mean(10, 5, 5)), TypeError);
    assert.throws(() => compare(tA, tB, { alpha: 0 }), RangeError);
    assert.throws(() => compare(tA, tB, { alpha: 1 }), RangeError);
    assert.throws(() => compare(tA, tB, { sequentialTuning: 0 }), RangeError);
    assert.throws(() => compare(proportion(10, 11), proportion(10, 5)), RangeError);
    assert.throws(() => compare(tA, mean(10, Number.NaN, 5)), RangeError);
  });

  it('gives no result for a negative baseline mean, where a relative lift has no direction', () => {
    assert.deepEqual(compare(mean(100, -50, 400), mean(100, 20, 400)), { relativeLift: null, ...NO_RESULT });
  });
});

describe('summarize: the means gbstats reports of its fixtures', () => {
  it('test_gbstats.py › baseline_cr and v1_cr of the fixtures (the means gbstats reports)', () => {
    const cases: Array<[MetricStatistic, number]> = [
      [multiZero, 2.7],
      [multiOne, 2.5],
      [ratioZero, 0.529411765],
      [ratioOne, 0.6],
      [oneUserZero, 6.666666667],
      [oneUserOne, 1],
      [zeroDenominator, 0],
    ];
    for (const [stat, expected] of cases) assertClose(summarize(stat).mean, expected, 9, 'mean');
  });
});
