// Results of an experiment (issue 32): per-variant sums from SQL turned into the statistics of the
// results answer, and the same rows as CSV. Pure.
import type { Experiment } from './experiment.ts';
import type { Metric } from './metric.ts';
import type { VariantSums } from './results.store.ts';
import { compare, type Comparison, type MetricStatistic, sampleRatioMismatch, summarize } from './statistics/index.ts';

export interface VariantResult {
  variant: string;
  users: number;
  mean: number;
  stddev: number;
}

export interface ComparisonResult extends Comparison {
  variant: string;
  baseline: string;
}

export interface MetricResult {
  metric: string;
  type: Metric['type'];
  /** True for a guardrail: what must not get worse. */
  guardrail: boolean;
  variants: VariantResult[];
  comparisons: ComparisonResult[];
}

export interface ExperimentResults {
  experiment: string;
  status: 'running' | 'stopped';
  startedAt: string;
  /** Users exposed to more than one variant: counted in the variant of their first exposure only. */
  multipleExposures: number;
  users: Record<string, number>;
  srm: { pValue: number; mismatch: boolean };
  metrics: MetricResult[];
}

const statisticOf = (type: Metric['type'], s: VariantSums): MetricStatistic => {
  if (type === 'proportion') return { kind: 'proportion', n: s.users, sum: s.converted };
  if (type === 'mean') return { kind: 'mean', n: s.users, sum: s.sum, sumSquares: s.sumSquares };
  return {
    kind: 'ratio',
    n: s.users,
    numeratorSum: s.sum,
    numeratorSumSquares: s.sumSquares,
    denominatorSum: s.denominatorSum,
    denominatorSumSquares: s.denominatorSumSquares,
    sumOfProducts: s.sumOfProducts,
  };
};

const noSums = (): VariantSums => ({ users: 0, converted: 0, sum: 0, sumSquares: 0, denominatorSum: 0, denominatorSumSquares: 0, sumOfProducts: 0 });

/** One metric's rows: every variant of the split (control first), and each other variant against the control. */
export function metricResult(experiment: Experiment, metric: Metric, guardrail: boolean, sums: ReadonlyMap<string, VariantSums>): MetricResult {
  const variants = orderedVariants(experiment);
  const stats = new Map(variants.map((v) => [v, statisticOf(metric.type, sums.get(v) ?? noSums())]));
  const control = stats.get(experiment.controlVariant)!;
  return {
    metric: metric.key,
    type: metric.type,
    guardrail,
    variants: variants.map((variant) => ({ variant, ...summarize(stats.get(variant)!) })),
    comparisons: variants
      .filter((v) => v !== experiment.controlVariant)
      .map((variant) => ({
        variant,
        baseline: experiment.controlVariant,
        ...compare(control, stats.get(variant)!, { direction: metric.direction }),
      })),
  };
}

/** The split's variants, the control first (the order of the results' rows). */
export function orderedVariants(experiment: Experiment): string[] {
  const split = (experiment.split?.weights ?? []).map((w) => w.variant);
  return [experiment.controlVariant, ...split.filter((v) => v !== experiment.controlVariant)];
}

/** Users per variant and the sample-ratio check against the split's weights (chi-squared, mismatch at p < 0.001). */
export function usersAndSrm(experiment: Experiment, byVariant: ReadonlyMap<string, number>) {
  const weights = experiment.split?.weights ?? [];
  const users = Object.fromEntries(orderedVariants(experiment).map((v) => [v, byVariant.get(v) ?? 0]));
  const srm =
    weights.length > 1
      ? sampleRatioMismatch(
          weights.map((w) => users[w.variant] ?? 0),
          weights.map((w) => w.weight),
        )
      : { pValue: 1, mismatch: false };
  return { users, srm };
}

const CSV_HEADER = [
  'metric',
  'type',
  'guardrail',
  'variant',
  'baseline',
  'users',
  'mean',
  'stddev',
  'relativeLift',
  'ci95Low',
  'ci95High',
  'pValue',
  'chanceToWin',
  'sequentialCi95Low',
  'sequentialCi95High',
  'significant',
];

/** A CSV cell: numbers as JavaScript writes them, nothing a spreadsheet would run (keys are plain words). */
const cell = (value: unknown): string => {
  if (value === null || value === undefined) return '';
  const text = String(value);
  const safe = /^[=+\-@\t\r]/.test(text) && typeof value === 'string' ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

/** The results as CSV: one row per metric and variant, the comparison with the control on the other variants' rows. */
export function resultsCsv(results: ExperimentResults): string {
  const lines = [CSV_HEADER.join(',')];
  for (const m of results.metrics) {
    for (const v of m.variants) {
      const c = m.comparisons.find((x) => x.variant === v.variant);
      lines.push(
        [
          m.metric,
          m.type,
          m.guardrail,
          v.variant,
          c?.baseline,
          v.users,
          v.mean,
          v.stddev,
          c?.relativeLift,
          c?.ci95?.[0],
          c?.ci95?.[1],
          c?.pValue,
          c?.chanceToWin,
          c?.sequentialCi95?.[0],
          c?.sequentialCi95?.[1],
          c?.significant,
        ]
          .map(cell)
          .join(','),
      );
    }
  }
  return `${lines.join('\r\n')}\r\n`;
}
