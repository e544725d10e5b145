import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Db } from '../db/database.ts';
import { type ArmQuery, armStatistics, compare, hasEnoughData, type Metric, type MetricStatistic, type MetricStore, summarize } from '../experiments/index.ts';
import { type Lookup, refusedTarget, type WebhookTargetPolicy } from '../delivery/index.ts';
import { breachReason, DEFAULT_MIN_USERS, type GuardrailReading, type MetricGuardrail, type PrometheusGuardrail } from './release.ts';

/** What a guardrail said at one check, with its numbers: what the API shows and the chart draws. */
export interface GuardrailView extends GuardrailReading {
  /** Metric: users per arm (keyed by variant). */
  users?: Record<string, number>;
  /** Metric: each arm's mean (keyed by variant). */
  means?: Record<string, number>;
  lift?: number | null;
  ci95?: [number, number] | null;
  sequentialCi95?: [number, number] | null;
  pValue?: number | null;
  /** Prometheus: the query's value. */
  value?: number | null;
  /** Prometheus: since when the value has been past its threshold (ISO), what `forSeconds` counts from. */
  pastThresholdSince?: string;
  checkedAt?: string;
}

/** The experiments' data a metric guardrail reads (a port of releases, answered by `ExperimentGuardrailData`). */
export interface GuardrailData {
  metricOf(projectId: string, metricKey: string): Promise<Metric | undefined>;
  arms(query: ArmQuery): Promise<{ baseline: MetricStatistic; variant: MetricStatistic }>;
}

/** The port over the experiments capability: its metrics and its per-user aggregation of two arms. */
export class ExperimentGuardrailData implements GuardrailData {
  constructor(
    private readonly db: Db,
    private readonly metrics: Pick<MetricStore, 'find'>,
  ) {}

  metricOf(projectId: string, metricKey: string): Promise<Metric | undefined> {
    return this.metrics.find(this.db, projectId, metricKey);
  }

  arms(query: ArmQuery) {
    return armStatistics(this.db, query);
  }
}

/** Where a release's arms are: what a metric guardrail needs of its release. */
export interface ArmsOf {
  projectId: string;
  environmentId: string;
  flagSlug: string;
  variant: string;
  baseline: string;
  /** When the release started (exposures from then on count). */
  startedAt: string;
}

/**
 * A metric guardrail (issue 33): users by first exposure to either arm since the release started; it is
 * `collecting` until each arm has `minUsers` and both arms' means are known well enough to decide at every
 * look (`hasEnoughData`, ADR 0043: deciding on a user minimum alone gave 8-30 % false rollbacks in the
 * statistics' simulation), and `breached` when the sequential interval of the relative lift excludes zero
 * on the metric's bad side (the side opposite its `direction`).
 */
export async function readMetricGuardrail(data: GuardrailData, arms: ArmsOf, guardrail: MetricGuardrail, now: Date): Promise<GuardrailView> {
  const checkedAt = now.toISOString();
  const metric = await data.metricOf(arms.projectId, guardrail.metric);
  if (!metric) return { state: 'unknown', reason: `the metric ${guardrail.metric} no longer exists`, checkedAt };
  const stats = await data.arms({
    environmentId: arms.environmentId,
    flagKey: arms.flagSlug,
    baseline: arms.baseline,
    variant: arms.variant,
    metric,
    sinceMs: Date.parse(arms.startedAt),
    untilMs: now.getTime(),
  });
  const users = { [arms.variant]: stats.variant.n, [arms.baseline]: stats.baseline.n };
  const means = { [arms.variant]: summarize(stats.variant).mean, [arms.baseline]: summarize(stats.baseline).mean };
  const minUsers = guardrail.minUsers ?? DEFAULT_MIN_USERS;
  const numbers = { users, means, checkedAt };
  if (stats.variant.n < minUsers || stats.baseline.n < minUsers) {
    return { state: 'collecting', reason: `each arm needs ${minUsers} users`, ...numbers };
  }
  if (!hasEnoughData(stats.baseline, stats.variant)) {
    return { state: 'collecting', reason: "the arms' means are not yet known within 20 %", ...numbers };
  }
  const result = compare(stats.baseline, stats.variant, { direction: metric.direction });
  const view = { ...numbers, lift: result.relativeLift, ci95: result.ci95, sequentialCi95: result.sequentialCi95, pValue: result.pValue };
  const interval = result.sequentialCi95;
  if (interval === null || result.relativeLift === null) return { state: 'collecting', reason: 'no variation in the arms yet', ...view };
  const bad = metric.direction === 'decrease' ? interval[0] > 0 : interval[1] < 0;
  if (!bad) return { state: 'healthy', ...view };
  const reason = breachReason(metric.key, metric.type, means[arms.baseline]!, means[arms.variant]!, result.relativeLift, interval);
  return { state: 'breached', reason, ...view };
}

/** An instant query's answer, or why there is none (in words). */
type QueryResult = { value: number | null } | { error: string };

const PROMETHEUS_TIMEOUT_MS = 5_000;
/** The largest answer read of an instant query (a scalar or a one-series vector is far smaller). */
const MAX_ANSWER_BYTES = 1_048_576;

/**
 * Instant queries (`GET <url>/api/v1/query?query=...`) of a Prometheus-compatible API (Prometheus, Thanos,
 * Mimir, VictoriaMetrics). The URL obeys FLAGPOST_WEBHOOK_TARGETS as webhooks do: an IP literal and every
 * address a name resolves to are checked against the policy on the connection itself
 * (`refusedTarget`, docs/adr/0012-webhook-targets.md), so a refused target is never contacted.
 */
export class PrometheusClient {
  private readonly lookup: Lookup;

  constructor(private readonly options: { policy: WebhookTargetPolicy; lookup?: Lookup; timeoutMs?: number }) {
    this.lookup = options.lookup ?? (dns.lookup as unknown as Lookup);
  }

  async query(base: string, query: string, at: Date): Promise<QueryResult> {
    let url: URL;
    try {
      url = new URL(`${base.replace(/\/+$/, '')}/api/v1/query`);
    } catch {
      return { error: 'the Prometheus URL is not valid' };
    }
    url.searchParams.set('query', query);
    url.searchParams.set('time', String(at.getTime() / 1000));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const refused = refusedTarget(host, this.options.policy);
      if (refused) return { error: `target refused: ${refused} (FLAGPOST_WEBHOOK_TARGETS=${this.options.policy})` };
    }
    const timeoutMs = this.options.timeoutMs ?? PROMETHEUS_TIMEOUT_MS;
    return new Promise<QueryResult>((resolve) => {
      const client = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
      if (!client) return resolve({ error: 'the Prometheus URL is not http or https' });
      const req = client.get(
        url,
        { agent: false, lookup: this.guardedLookup() as never, signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) response.destroy(new Error('the answer is larger than 1 MiB'));
            else chunks.push(chunk);
          });
          response.on('error', (error) => resolve({ error: `the query failed: ${error.message}` }));
          response.on('end', () => {
            if (response.statusCode !== 200) return resolve({ error: `Prometheus answered HTTP ${response.statusCode}` });
            resolve(valueOf(Buffer.concat(chunks).toString('utf8')));
          });
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (error.name === 'AbortError' || error.code === 'ABORT_ERR') resolve({ error: `Prometheus did not answer within ${timeoutMs} ms` });
        else resolve({ error: `Prometheus is unreachable: ${(error.code ?? error.message).slice(0, 300)}` });
      });
    });
  }

  private guardedLookup() {
    return (hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
      this.lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error);
        const refused = addresses.map((a) => refusedTarget(a.address, this.options.policy)).find((reason) => reason !== undefined);
        if (refused) return callback(Object.assign(new Error(`target refused: ${hostname}: ${refused}`), { code: 'ETARGETREFUSED' }));
        if (options.all) return callback(null, addresses);
        return callback(null, addresses[0]!.address, addresses[0]!.family);
      });
    };
  }
}

/** The value of an instant query's JSON answer: a scalar, or a vector's first sample (empty vector: null). */
function valueOf(text: string): QueryResult {
  let body: { status?: string; error?: string; data?: { resultType?: string; result?: unknown } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return { error: 'the answer is not JSON' };
  }
  if (body.status !== 'success') return { error: `the query failed: ${String(body.error ?? body.status).slice(0, 300)}` };
  const result = body.data?.result;
  let sample: unknown;
  if (body.data?.resultType === 'scalar') sample = result;
  else if (body.data?.resultType === 'vector' && Array.isArray(result)) {
    if (result.length === 0) return { value: null };
    sample = (result[0] as { value?: unknown }).value;
  } else return { error: `the query answered a ${String(body.data?.resultType)}, not a scalar or a vector` };
  const value = Array.isArray(sample) ? Number(sample[1]) : NaN;
  return Number.isNaN(value) && !(Array.isArray(sample) && sample[1] === 'NaN') ? { error: 'the answer has no value' } : { value };
}

/**
 * A Prometheus guardrail: breached when the value has stayed past its threshold (`above` or `below`) for
 * `forSeconds`, counted from the first check that saw it past (kept in the previous reading, so that a
 * restart keeps counting), and `collecting` until then (the step is held); `unknown` with the reason when the query fails, which holds the step and never
 * rolls back; an empty answer is healthy (no series is no errors).
 */
export async function readPrometheusGuardrail(
  client: Pick<PrometheusClient, 'query'>,
  guardrail: PrometheusGuardrail,
  previous: GuardrailView | undefined,
  now: Date,
): Promise<GuardrailView> {
  const { url, query, above, below, forSeconds = 0 } = guardrail.prometheus;
  const checkedAt = now.toISOString();
  const result = await client.query(url, query, now);
  if ('error' in result) return { state: 'unknown', reason: result.error, checkedAt, pastThresholdSince: previous?.pastThresholdSince };
  const { value } = result;
  const past = value !== null && !Number.isNaN(value) && (above !== undefined ? value > above : value < below!);
  if (!past) return { state: 'healthy', value, checkedAt };
  const since = previous?.pastThresholdSince ?? checkedAt;
  const held = (now.getTime() - Date.parse(since)) / 1000;
  const side = above !== undefined ? `above ${above}` : `below ${below}`;
  if (held >= forSeconds) {
    return { state: 'breached', reason: `${query} was ${side} for ${Math.round(held)} s (last value ${value})`, value, checkedAt, pastThresholdSince: since };
  }
  // Past the threshold but not for long enough yet: not a breach, and no reason to move on either.
  return { state: 'collecting', reason: `${side} since ${since}; a breach after ${forSeconds} s`, value, checkedAt, pastThresholdSince: since };
}
