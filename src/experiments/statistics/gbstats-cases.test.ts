import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { type Comparison, type CompareOptions, compare, type MetricStatistic, sampleRatioMismatch, type Summary, summarize } from './index.ts';

// 120 A/B comparisons and 30 splits of random per-user data (proportions, skewed and sparse means,
// ratios; from 1 to 5,000 users, with zero variances and zero baselines among them) and what gbstats
// 0.8.0 itself computed from them, written by scripts/gbstats-cases.py with gbstats' own code. Checked
// to 9 decimals (relative for values beyond 1).

interface Case {
  case: number;
  baseline: MetricStatistic;
  variant: MetricStatistic;
  options: Required<CompareOptions>;
  summaries: [Summary, Summary];
  comparison: Comparison;
}
interface Cases {
  gbstats: string;
  comparisons: Case[];
  srm: Array<{ users: number[]; weights: number[]; pValue: number; mismatch: boolean }>;
}

const cases = JSON.parse(fs.readFileSync(new URL('./gbstats-0.8.0-cases.json', import.meta.url), 'utf8')) as Cases;

function assertNear(actual: unknown, expected: unknown, what: string): void {
  if (typeof expected !== 'number' || typeof actual !== 'number') return assert.deepEqual(actual, expected, what);
  assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${actual}, gbstats ${expected}`);
}

function assertSame(actual: object, expected: object, what: string): void {
  for (const [field, value] of Object.entries(expected)) {
    const mine = (actual as Record<string, unknown>)[field];
    if (Array.isArray(value) && Array.isArray(mine)) value.forEach((v, i) => assertNear(mine[i], v, `${what}.${field}[${i}]`));
    else assertNear(mine, value, `${what}.${field}`);
  }
}

describe(`agreement with gbstats ${cases.gbstats} on random per-user data (scripts/gbstats-cases.py)`, () => {
  it('covers results and no-results of every kind', () => {
    assert.equal(cases.gbstats, '0.8.0');
    for (const kind of ['proportion', 'mean', 'ratio']) {
      const ofKind = cases.comparisons.filter((c) => c.baseline.kind === kind);
      assert.ok(ofKind.some((c) => c.comparison.ci95 !== null) && ofKind.some((c) => c.comparison.ci95 === null), kind);
    }
    assert.ok(cases.comparisons.some((c) => c.comparison.significant));
    assert.ok(cases.srm.some((s) => s.mismatch) && cases.srm.some((s) => !s.mismatch));
  });

  it('computes every comparison as gbstats does', () => {
    for (const c of cases.comparisons) assertSame(compare(c.baseline, c.variant, c.options), c.comparison, `case ${c.case}`);
  });

  it('summarizes every variant as gbstats does (users, mean, stddev)', () => {
    for (const c of cases.comparisons) {
      assertSame(summarize(c.baseline), c.summaries[0], `case ${c.case} baseline`);
      assertSame(summarize(c.variant), c.summaries[1], `case ${c.case} variant`);
    }
  });

  it('finds the sample-ratio mismatches gbstats finds (check_srm, every weight positive)', () => {
    for (const [i, s] of cases.srm.entries()) assertSame(sampleRatioMismatch(s.users, s.weights), { pValue: s.pValue, mismatch: s.mismatch }, `split ${i}`);
  });
});
