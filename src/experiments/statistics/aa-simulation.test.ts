import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compare, hasEnoughData, type MetricStatistic } from './index.ts';

// A/A experiments: both arms draw from the same distribution, so every significant look is a false
// positive, and an experiment with any significant look counts once. The sequential interval must
// hold its 5 % however often it is looked at; the fixed-horizon interval, looked at as often, must not
// (else these simulations could not tell them apart). Two metrics per experiment: a conversion and the
// revenue of the converted users (exponential amounts: mostly zeros and a long tail). Deterministic: a
// seeded PRNG (mulberry32), the same numbers on every run. ADR 0043 has the figures over more seeds.

const EXPERIMENTS = 200;
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

interface Scenario {
  seed: number;
  looks: number;
  usersPerArmPerLook: number;
  conversion: number;
  /** Decide only at looks where hasEnoughData() says so (as a guardrail should). */
  waitForData: boolean;
}

const METRICS = {
  proportion: (arm: Arm): MetricStatistic => ({ kind: 'proportion', n: arm.n, sum: arm.converted }),
  revenue: (arm: Arm): MetricStatistic => ({ kind: 'mean', n: arm.n, sum: arm.revenue, sumSquares: arm.revenueSquares }),
};
type Rates = Record<keyof typeof METRICS, { sequential: number; fixed: number }>;

const excludesZero = (interval: [number, number] | null) => interval !== null && (interval[0] > 0 || interval[1] < 0);

/** The share of experiments in which any look was significant, per metric and interval. */
function simulate({ seed, looks, usersPerArmPerLook, conversion, waitForData }: Scenario): Rates {
  const random = mulberry32(seed);
  const addUsers = (arm: Arm) => {
    for (let i = 0; i < usersPerArmPerLook; i++) {
      arm.n++;
      if (random() >= conversion) continue;
      const spent = -MEAN_PURCHASE * Math.log(1 - random());
      arm.converted++;
      arm.revenue += spent;
      arm.revenueSquares += spent * spent;
    }
  };
  const rates: Rates = { proportion: { sequential: 0, fixed: 0 }, revenue: { sequential: 0, fixed: 0 } };
  for (let e = 0; e < EXPERIMENTS; e++) {
    const control: Arm = { n: 0, converted: 0, revenue: 0, revenueSquares: 0 };
    const treatment: Arm = { ...control };
    const seen: Rates = { proportion: { sequential: 0, fixed: 0 }, revenue: { sequential: 0, fixed: 0 } };
    for (let look = 0; look < looks; look++) {
      addUsers(control);
      addUsers(treatment);
      for (const metric of ['proportion', 'revenue'] as const) {
        const [baseline, variant] = [METRICS[metric](control), METRICS[metric](treatment)];
        if (waitForData && !hasEnoughData(baseline, variant)) continue;
        const result = compare(baseline, variant);
        if (excludesZero(result.sequentialCi95)) seen[metric].sequential = 1;
        if (excludesZero(result.ci95)) seen[metric].fixed = 1;
      }
    }
    for (const metric of ['proportion', 'revenue'] as const) {
      rates[metric].sequential += seen[metric].sequential / EXPERIMENTS;
      rates[metric].fixed += seen[metric].fixed / EXPERIMENTS;
    }
  }
  return rates;
}

const show = (rates: Rates, interval: 'sequential' | 'fixed') =>
  `${interval}: conversion ${(rates.proportion[interval] * 100).toFixed(1)} %, revenue ${(rates.revenue[interval] * 100).toFixed(1)} %`;

describe('A/A simulation: 200 experiments of 14 daily looks (250 users per arm a day, 10 % convert)', () => {
  const rates = simulate({ seed: 20261127, looks: 14, usersPerArmPerLook: 250, conversion: 0.1, waitForData: false });

  it('keeps the sequential false-positive rate at or below 5 % for a proportion and for a mean', (t) => {
    t.diagnostic(show(rates, 'sequential'));
    assert.ok(rates.proportion.sequential <= 0.05, show(rates, 'sequential'));
    assert.ok(rates.revenue.sequential <= 0.05, show(rates, 'sequential'));
  });

  it('shows why: the fixed-horizon interval looked at daily passes 5 %', (t) => {
    t.diagnostic(show(rates, 'fixed'));
    assert.ok(rates.proportion.fixed > 0.05 && rates.revenue.fixed > 0.05, show(rates, 'fixed'));
  });
});

describe('A/A simulation as a guardrail sees it: 200 releases of 100 looks (35 users per arm between looks, 2 % convert)', () => {
  const scenario = { seed: 20261128, looks: 100, usersPerArmPerLook: 35, conversion: 0.02 };

  it('keeps the sequential false-positive rate at or below 5 % when it decides only with enough data', (t) => {
    const rates = simulate({ ...scenario, waitForData: true });
    t.diagnostic(show(rates, 'sequential'));
    t.diagnostic(show(rates, 'fixed'));
    assert.ok(rates.proportion.sequential <= 0.05 && rates.revenue.sequential <= 0.05, show(rates, 'sequential'));
    assert.ok(rates.proportion.fixed > 0.05 && rates.revenue.fixed > 0.05, show(rates, 'fixed'));
  });

  it('passes 5 % by far when it decides from the first converted users on (why hasEnoughData exists)', (t) => {
    const rates = simulate({ ...scenario, waitForData: false });
    t.diagnostic(show(rates, 'sequential'));
    assert.ok(rates.proportion.sequential > 0.05 && rates.revenue.sequential > 0.05, show(rates, 'sequential'));
  });
});
