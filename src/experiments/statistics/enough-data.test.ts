import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasEnoughData, type MetricStatistic } from './index.ts';

// Flagpost's own rule (not gbstats'): each arm's relative standard error, stddev / (√n · mean), at most
// 0.2 by default. aa-simulation.test.ts shows what it is for.
const proportion = (n: number, sum: number): MetricStatistic => ({ kind: 'proportion', n, sum });
const mean = (n: number, sum: number, sumSquares: number): MetricStatistic => ({ kind: 'mean', n, sum, sumSquares });
const ratio = (n: number, numeratorSum: number, denominatorSum: number): MetricStatistic => ({
  kind: 'ratio',
  n,
  numeratorSum,
  numeratorSumSquares: numeratorSum * 3,
  denominatorSum,
  denominatorSumSquares: denominatorSum * 2,
  sumOfProducts: numeratorSum * 2,
});

describe('hasEnoughData: both arms’ means known to a relative standard error of 0.2', () => {
  const rows: Array<[string, MetricStatistic, MetricStatistic, boolean, number?]> = [
    ['25 of 1,000 converted in each arm: 0.197', proportion(1000, 25), proportion(1000, 25), true],
    ['20 of 1,000 converted in the variant: 0.221', proportion(1000, 25), proportion(1000, 20), false],
    ['20 of 1,000 in the baseline', proportion(1000, 20), proportion(1000, 25), false],
    ['20 of 1,000 with a bound of 0.25', proportion(1000, 20), proportion(1000, 20), true, 0.25],
    ['no user converted', proportion(1000, 0), proportion(1000, 25), false],
    ['every user converted (no variance)', proportion(1000, 1000), proportion(1000, 25), false],
    ['no users', proportion(0, 0), proportion(1000, 25), false],
    ['a mean: 100 users, values 1 ± 1 (0.1)', mean(100, 100, 199), mean(100, 100, 199), true],
    ['a mean: 100 users, 4 of them spent 40 (0.49)', mean(100, 160, 6400), mean(100, 100, 199), false],
    ['a mean below 0', mean(100, -100, 199), mean(100, 100, 199), false],
    ['a ratio over users with denominators', ratio(400, 400, 800), ratio(400, 400, 800), true],
    ['a ratio without denominators', ratio(400, 400, 0), ratio(400, 400, 800), false],
  ];
  for (const [name, baseline, variant, expected, maxRelativeError] of rows) {
    it(`${expected ? 'has' : 'has not'} enough data with ${name}`, () => {
      assert.equal(hasEnoughData(baseline, variant, maxRelativeError === undefined ? {} : { maxRelativeError }), expected);
    });
  }

  it('refuses a bound that is not positive, and impossible sums', () => {
    assert.throws(() => hasEnoughData(proportion(10, 5), proportion(10, 5), { maxRelativeError: 0 }), RangeError);
    assert.throws(() => hasEnoughData(proportion(10, 11), proportion(10, 5)), RangeError);
  });
});
