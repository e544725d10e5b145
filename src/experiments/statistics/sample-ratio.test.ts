import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sampleRatioMismatch } from './index.ts';

// The SRM GrowthBook shows is its back-end's checkSrm (gbstats' check_srm agrees when every weight is
// positive). Expected p-values: growthbook/growthbook packages/back-end/test/stats.test.ts,
// "calculates SRM correctly" (at 0d534e07be, 9 decimals), one row per assertion there.
const rows: Array<[string, number[], number[], number]> = [
  ['Simple 2-way test', [1000, 1200], [0.5, 0.5], 0.000020079],
  ['Another 2-way test', [135, 115], [0.5, 0.5], 0.205903211],
  ['Uneven weights', [310, 98], [0.75, 0.25], 0.647434186],
  ['Not enough valid weights', [1000, 900, 800], [1, 0, 0], 1],
  ['Skip empty weights', [1000, 1200, 900], [0.5, 0.5, 0], 0.000020079],
  ['Skip if all users are 0', [0, 0, 0], [0.34, 0.33, 0.33], 1],
  ['Use empty users in the test', [0, 10, 10], [0.34, 0.33, 0.33], 0.005790624],
  ['More than 2 variations', [500, 500, 600], [0.34, 0.33, 0.33], 0.000592638],
  ['Completely equal', [500, 500], [0.5, 0.5], 1],
];

describe('sampleRatioMismatch: chi-squared of the users against the split (GrowthBook checkSrm cases)', () => {
  for (const [name, users, weights, pValue] of rows) {
    it(`${name}: ${JSON.stringify(users)} for weights ${JSON.stringify(weights)} gives p = ${pValue}`, () => {
      const result = sampleRatioMismatch(users, weights);
      assert.ok(Math.abs(result.pValue - pValue) <= 5e-10, `p = ${result.pValue}`);
      assert.equal(result.mismatch, pValue < 0.001);
    });
  }

  it('calls a mismatch only below p = 0.001', () => {
    // 1000 + 1145 users on a 50/50 split: chi-squared 9.80, p = 0.00174; 1000 + 1160: p = 0.00058.
    assert.equal(sampleRatioMismatch([1000, 1145], [50, 50]).mismatch, false);
    assert.equal(sampleRatioMismatch([1000, 1160], [50, 50]).mismatch, true);
  });

  it('keeps its precision far into the tail (a p-value below 1e-16 is not rounded to 0)', () => {
    const { pValue } = sampleRatioMismatch([1000, 2000], [1, 1]);
    assert.ok(pValue > 0 && pValue < 1e-16, `p = ${pValue}`);
  });

  it('refuses user counts that are not whole numbers from 0, and weights that are not finite', () => {
    assert.throws(() => sampleRatioMismatch([10, -1], [1, 1]), RangeError);
    assert.throws(() => sampleRatioMismatch([10, 2.5], [1, 1]), RangeError);
    assert.throws(() => sampleRatioMismatch([10, 10], [1, Number.NaN]), RangeError);
  });

  it('refuses user counts and weights of different lengths (GrowthBook answers 1 for [1000] against two weights)', () => {
    assert.throws(() => sampleRatioMismatch([1000], [0.5, 0.5]), RangeError);
  });
});
