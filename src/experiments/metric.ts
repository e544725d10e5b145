// Metrics of a project (issue 32): what results measure per user, from their first exposure on and within
// the metric's window. Pure types and rules.

export type MetricType = 'proportion' | 'mean' | 'ratio';
export const METRIC_TYPES: readonly MetricType[] = ['proportion', 'mean', 'ratio'];
export type MetricDirection = 'increase' | 'decrease';

export interface Metric {
  id: string;
  projectId: string;
  key: string;
  name: string;
  /** The tracked event's name (`POST /v1/track` kind `track`). */
  event: string;
  /**
   * Per user: `proportion` 1 when they tracked `event` at least once, else 0; `mean` the sum of its values
   * (1 for an event without one), 0 without events; `ratio` that sum over the sum of `denominatorEvent`'s.
   */
  type: MetricType;
  /** The denominator's event of a ratio metric; null otherwise. */
  denominatorEvent: string | null;
  /** Which way is better. */
  direction: MetricDirection;
  /** Events count from a user's first exposure to this many hours after it. */
  windowHours: number;
  createdAt: string;
  updatedAt: string;
}

/** What a metric's POST or PATCH sets (absent keeps on PATCH; null clears the denominator). */
export interface MetricValues {
  name?: string;
  event?: string;
  type?: MetricType;
  denominatorEvent?: string | null;
  direction?: MetricDirection;
  windowHours?: number;
}

export const DEFAULT_WINDOW_HOURS = 72;

/** A ratio needs its denominator's event, and only a ratio has one; the problem, or undefined. */
export function metricProblem(m: Pick<Metric, 'type' | 'denominatorEvent'>): { field: string; reason: string } | undefined {
  if (m.type === 'ratio' && !m.denominatorEvent) return { field: 'body.denominatorEvent', reason: 'a ratio metric needs denominatorEvent' };
  if (m.type !== 'ratio' && m.denominatorEvent) return { field: 'body.denominatorEvent', reason: 'only a ratio metric has a denominatorEvent' };
  return undefined;
}

export const metricView = (m: Metric) => ({
  key: m.key,
  name: m.name,
  event: m.event,
  type: m.type,
  denominatorEvent: m.denominatorEvent,
  direction: m.direction,
  windowHours: m.windowHours,
  createdAt: m.createdAt,
  updatedAt: m.updatedAt,
});
