// Statistics of experiments and guardrails, as GrowthBook's engine gbstats 0.8.0 computes them with
// its defaults (ADR 0043). Pure: no I/O, no clock; imports nothing but its numeric packages.
export { type Comparison, type CompareOptions, compare } from './comparison.ts';
export { type MetricStatistic, type Summary, summarize } from './metric-statistic.ts';
export { SRM_THRESHOLD, sampleRatioMismatch } from './sample-ratio.ts';
export { DEFAULT_MAX_RELATIVE_ERROR, hasEnoughData } from './enough-data.ts';
