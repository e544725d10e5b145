import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compare, type MetricStatistic } from './index.ts';

// A/A experiments: both arms draw from the same distribution, so every significant look is a false
// positive. The sequential interval must hold its 5 % however often it is looked at (daily, here); the
// fixed-horizon interval, looked at as often, must not (else this simulation could not tell them
// apart). Deterministic: a seeded PRNG (mulberry32), the same numbers on every run.

const EXPERIMENTS = 200;
const DAYS = 14;
const USERS_PER_ARM_PER_DAY = 250;
const CONVERSION = 0.1;
const MEAN_PURCHASE = 40;

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Arm {
  n: number;
  converted: number;
  revenue: number;
  revenueSquares: number;
}

/** One day's users of one arm: each converts with CONVERSION and then spends an exponential amount. */
function addDay(arm: Arm, random: () => number): void {
  for (let i = 0; i < USERS_PER_ARM_PER_DAY; i++) {
    arm.n++;
    if (random() >= CONVERSION) continue;
    const spent = -MEAN_PURCHASE * Math.log(1 - random());
    arm.converted++;
    arm.revenue += spent;
    arm.revenueSquares += spent * spent;
  }
}

const asProportion = (arm: Arm): MetricStatistic => ({ kind: 'proportion', n: arm.n, sum: arm.converted });
const asMean = (arm: Arm): MetricStatistic => ({ kind: 'mean', n: arm.n, sum: arm.revenue, sumSquares: arm.revenueSquares });
const excludesZero = (interval: [number, number] | null) => interval !== null && (interval[0] > 0 || interval[1] < 0);

/** The share of experiments in which any daily look was significant, per metric and interval. */
function simulate(seed: number) {
  const random = mulberry32(seed);
  const falsePositives = { proportion: { sequential: 0, fixed: 0 }, mean: { sequential: 0, fixed: 0 } };
  for (let e = 0; e < EXPERIMENTS; e++) {
    const control: Arm = { n: 0, converted: 0, revenue: 0, revenueSquares: 0 };
    const treatment: Arm = { ...control };
    const seen = { proportion: { sequential: false, fixed: false }, mean: { sequential: false, fixed: false } };
    for (let day = 0; day < DAYS; day++) {
      addDay(control, random);
      addDay(treatment, random);
      for (const [metric, as] of [
        ['proportion', asProportion],
        ['mean', asMean],
      ] as const) {
        const result = compare(as(control), as(treatment));
        seen[metric].sequential ||= excludesZero(result.sequentialCi95);
        seen[metric].fixed ||= excludesZero(result.ci95);
      }
    }
    for (const metric of ['proportion', 'mean'] as const)
      for (const interval of ['sequential', 'fixed'] as const) falsePositives[metric][interval] += Number(seen[metric][interval]);
  }
  const rate = (count: number) => count / EXPERIMENTS;
  return {
    proportion: { sequential: rate(falsePositives.proportion.sequential), fixed: rate(falsePositives.proportion.fixed) },
    mean: { sequential: rate(falsePositives.mean.sequential), fixed: rate(falsePositives.mean.fixed) },
  };
}

describe('A/A simulation: 200 experiments of 14 daily looks (250 users per arm a day)', () => {
  const rates = simulate(20261127);

  it('keeps the sequential false-positive rate at or below 5 % for a proportion and for a mean', (t) => {
    t.diagnostic(`sequential: proportion ${rates.proportion.sequential}, mean ${rates.mean.sequential}`);
    assert.ok(rates.proportion.sequential <= 0.05, `proportion: ${rates.proportion.sequential}`);
    assert.ok(rates.mean.sequential <= 0.05, `mean: ${rates.mean.sequential}`);
  });

  it('shows why: the fixed-horizon interval looked at daily passes 5 %', (t) => {
    t.diagnostic(`fixed horizon: proportion ${rates.proportion.fixed}, mean ${rates.mean.fixed}`);
    assert.ok(rates.proportion.fixed > 0.05, `proportion: ${rates.proportion.fixed}`);
    assert.ok(rates.mean.fixed > 0.05, `mean: ${rates.mean.fixed}`);
  });
});
