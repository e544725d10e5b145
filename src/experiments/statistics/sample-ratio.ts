import { chiSquaredSurvival } from './distributions.ts';

/** Below this p-value a split's observed users are a sample-ratio mismatch (GrowthBook's default). */
export const SRM_THRESHOLD = 0.001;

/**
 * Pearson's chi-squared test of the users each variant got against the split's weights, as GrowthBook
 * computes the SRM it shows (back-end `checkSrm`): variants with no weight are left out, and with
 * fewer than two weighted variants or no users at all there is nothing to test (p = 1). Weights need
 * not sum to 1. (gbstats' own `check_srm` agrees whenever every weight is positive.)
 */
export function sampleRatioMismatch(users: number[], weights: number[]): { pValue: number; mismatch: boolean } {
  if (users.length !== weights.length) throw new RangeError(`sampleRatioMismatch: ${users.length} user counts for ${weights.length} weights`);
  if (!users.every((u) => Number.isInteger(u) && u >= 0)) throw new RangeError(`sampleRatioMismatch: user counts ${JSON.stringify(users)}`);
  if (!weights.every((w) => Number.isFinite(w))) throw new RangeError(`sampleRatioMismatch: weights ${JSON.stringify(weights)}`);
  const arms = users.map((observed, i) => ({ observed, weight: weights[i]! })).filter((arm) => arm.weight > 0);
  const totalUsers = arms.reduce((sum, arm) => sum + arm.observed, 0);
  const totalWeight = arms.reduce((sum, arm) => sum + arm.weight, 0);
  if (arms.length < 2 || totalUsers === 0) return { pValue: 1, mismatch: false };
  let chiSquared = 0;
  for (const { observed, weight } of arms) {
    const expected = (weight / totalWeight) * totalUsers;
    chiSquared += (observed - expected) ** 2 / expected;
  }
  const pValue = chiSquaredSurvival(chiSquared, arms.length - 1);
  return { pValue, mismatch: pValue < SRM_THRESHOLD };
}
