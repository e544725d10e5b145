import { api } from '../api.ts';

// Issue 32: the shapes of the experiments' admin answers (docs/api.md, "Experiments"), and their queries.

export interface Metric {
  key: string;
  name: string;
  event: string;
  type: 'proportion' | 'mean' | 'ratio';
  denominatorEvent: string | null;
  direction: 'increase' | 'decrease';
  windowHours: number;
  createdAt: string;
  updatedAt: string;
}

export interface Experiment {
  key: string;
  name: string;
  flagKey: string;
  ruleId: string | null;
  controlVariant: string;
  metrics: string[];
  guardrails: string[];
  hypothesis: string | null;
  status: 'draft' | 'running' | 'stopped';
  startedAt: string | null;
  stoppedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Comparison {
  variant: string;
  baseline: string;
  relativeLift: number | null;
  ci95: [number, number] | null;
  pValue: number | null;
  chanceToWin: number | null;
  sequentialCi95: [number, number] | null;
  significant: boolean;
}

export interface MetricResult {
  metric: string;
  type: Metric['type'];
  variants: Array<{ variant: string; users: number; mean: number; stddev: number }>;
  comparisons: Comparison[];
}

export interface Results {
  experiment: string;
  status: Experiment['status'];
  startedAt: string | null;
  users: Record<string, number>;
  multipleExposures: number;
  srm: { pValue: number | null; mismatch: boolean };
  metrics: MetricResult[];
  /** Users counted so far at the end of each day (UTC), per variant. */
  timeline?: Array<{ date: string; users: Record<string, number> }>;
}

export const metricsPath = (projectKey: string) => `/projects/${encodeURIComponent(projectKey)}/metrics`;
export const experimentsPath = (projectKey: string, envKey: string) =>
  `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(envKey)}/experiments`;
export const experimentPath = (projectKey: string, envKey: string, experimentKey: string) =>
  `${experimentsPath(projectKey, envKey)}/${encodeURIComponent(experimentKey)}`;

export const metricsQuery = (projectKey: string) => ({
  queryKey: ['metrics', projectKey],
  queryFn: () => api<{ metrics: Metric[] }>('GET', metricsPath(projectKey)),
});

export const experimentsQuery = (projectKey: string, envKey: string) => ({
  queryKey: ['experiments', projectKey, envKey],
  queryFn: () => api<{ experiments: Experiment[] }>('GET', experimentsPath(projectKey, envKey)),
});

/** "4.1 %", "−12.0 %", "+484 %": a relative change as people read it (one decimal under 100 %, two under 1 %). */
export function percent(value: number, signed = false): string {
  const points = Math.abs(value * 100);
  const digits = points >= 100 ? 0 : points >= 1 ? 1 : 2;
  const text = `${points.toFixed(digits)} %`;
  if (value < 0 && Number(points.toFixed(digits)) !== 0) return `−${text}`;
  return signed && value > 0 ? `+${text}` : text;
}

/** A metric's mean: a rate for proportions, a number for the others. */
export function formatMean(type: Metric['type'], mean: number): string {
  if (type === 'proportion') return `${(mean * 100).toFixed(1)} %`;
  return Number(mean.toPrecision(4)).toLocaleString();
}

/** A variant's name in sentences: `treatment` reads "Treatment". */
export const titleCase = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * One comparison in words for a product manager: "Treatment raises purchase rate by 4.1 % (1.2 % to 7.0 %);
 * 99 % chance to beat control." A comparison without a decision says so.
 */
export function verdict(comparison: Comparison, metric: Pick<Metric, 'name' | 'direction'>): string {
  const { relativeLift: lift, ci95, chanceToWin } = comparison;
  const who = titleCase(comparison.variant);
  if (lift === null || ci95 === null) return `Not enough data yet to compare ${comparison.variant} with ${comparison.baseline} on ${metric.name}.`;
  const chance = chanceToWin === null ? '' : `; ${Math.round(chanceToWin * 100)} % chance to beat ${comparison.baseline}`;
  const range = `(${percent(ci95[0])} to ${percent(ci95[1])})`;
  if (!comparison.significant) return `No clear difference yet: ${who} changes ${metric.name} by ${percent(lift, true)} ${range}${chance}.`;
  const verb = lift > 0 ? 'raises' : 'lowers';
  return `${who} ${verb} ${metric.name} by ${percent(Math.abs(lift))} ${range}${chance}.`;
}

/** Whether a significant change goes the metric's good way (for colour), undefined when undecided. */
export function isGood(comparison: Comparison, direction: Metric['direction']): boolean | undefined {
  if (!comparison.significant || comparison.relativeLift === null) return undefined;
  return direction === 'increase' ? comparison.relativeLift > 0 : comparison.relativeLift < 0;
}
