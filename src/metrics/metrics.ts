import type * as client from 'prom-client';
import { loadPromClient } from '../optional-packages.ts';

// Prometheus metrics (issue 23, docs/adr/0036-metrics-and-traces.md) with prom-client: one registry per
// process, served on a listener of its own (metrics-server.ts), never on the public port. What happens
// per request (HTTP answers) is observed through label-bound children kept in a Map, so that a hot
// request costs a Map lookup and two additions; what the capabilities already count (flag evaluations by
// surface and reason,
// deliveries by outcome, open streams, the outbox queue, the database pool) is read at scrape time from
// the narrow interfaces below, so that they need no metrics code of their own.

/** What the metrics read from the rest of the process at scrape time (ports owned here, as http/ does). */
export interface MetricSources {
  /** Flag evaluations answered since start, by surface and reason (evaluation/flag-usage-tally.ts). */
  reads: { readonly usage: { evaluationCounts(): ReadonlyArray<{ readonly surface: string; readonly reason: string; readonly count: number }> } };
  /** Open OFREP event streams of this process. */
  streams: { readonly size: number };
  /** Open flagd sync streams of this process. */
  flagdSync: { readonly streamCount: number };
  /**
   * Every delivery queue of the process (src/delivery/delivery-loop.ts): the submissions' outbox, project
   * webhooks and change-request e-mails.
   */
  outbox: {
    /** Delivery attempts by outcome since start: delivered, retry (failed, will be tried again), failed (given up). */
    readonly outcomes: Readonly<Record<string, number>>;
    /** Deliveries waiting, and the age of the oldest, in seconds (0 when none). */
    queueStats(): Promise<{ pending: number; oldestPendingSeconds: number }>;
  };
  /** The PostgreSQL pool's connections (undefined on SQLite, which has one connection and no pool). */
  database: { poolStats?(): { total: number; idle: number; waiting: number; max: number } };
}

/** Seconds: from a fast-path answer (tens of microseconds) to a slow admin export. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const REBUILD_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const PROPAGATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

interface HttpChild {
  requests: client.Counter.Internal;
  duration: client.Histogram.Internal<string>;
}

export class Metrics {
  readonly registry: client.Registry;
  private readonly httpRequests: client.Counter;
  private readonly httpDuration: client.Histogram;
  private readonly http = new Map<string, HttpChild>();
  private readonly rebuildDuration: client.Histogram;
  private readonly propagationDelay: client.Histogram;
  private readonly submissions: client.Counter;

  constructor(sources: MetricSources) {
    // prom-client is loaded with the first Metrics (FLAGPOST_METRICS_PORT set), never otherwise.
    const prom = loadPromClient();
    this.registry = new prom.Registry();
    const registers = [this.registry];
    prom.collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new prom.Counter({
      name: 'flagpost_http_requests_total',
      help: 'HTTP requests answered, by method, route template (never the raw path) and status class',
      labelNames: ['method', 'route', 'status_class'],
      registers,
    });
    this.httpDuration = new prom.Histogram({
      name: 'flagpost_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method, route template and status class',
      labelNames: ['method', 'route', 'status_class'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    // Counted by the read path in plain numbers (no prom-client call per read), published at scrape time.
    new prom.Counter({
      name: 'flagpost_flag_reads_total',
      help: 'Flag evaluations answered (a list or bulk read: one per flag), by surface (ofrep_single, ofrep_bulk, v1_single, v1_list, flagd_sync) and OpenFeature reason (STATIC, TARGETING_MATCH, SPLIT, DEFAULT, DISABLED, ERROR; UNKNOWN for flagd_sync deliveries)',
      labelNames: ['surface', 'reason'],
      registers,
      collect() {
        this.reset();
        for (const { surface, reason, count } of sources.reads.usage.evaluationCounts()) this.inc({ surface, reason }, count);
      },
    });
    new prom.Gauge({
      name: 'flagpost_event_streams_open',
      help: 'Open event streams of this process, by kind: ofrep (SSE), flagd_sync (gRPC)',
      labelNames: ['kind'],
      registers,
      collect() {
        this.set({ kind: 'ofrep' }, sources.streams.size);
        this.set({ kind: 'flagd_sync' }, sources.flagdSync.streamCount);
      },
    });
    this.rebuildDuration = new prom.Histogram({
      name: 'flagpost_read_model_rebuild_duration_seconds',
      help: "Time to load and compile an environment's snapshot of the read model (its _count: the rebuilds)",
      buckets: REBUILD_BUCKETS,
      registers,
    });
    this.propagationDelay = new prom.Histogram({
      name: 'flagpost_change_propagation_delay_seconds',
      help: "From another instance's NOTIFY of a flag change to this instance applying it (PostgreSQL; hosts' clocks must agree)",
      buckets: PROPAGATION_BUCKETS,
      registers,
    });
    // One count/min query per queue table, gauge and scrape. While the database is away the scrape still
    // answers (that is when it matters), with NaN for these two.
    new prom.Gauge({
      name: 'flagpost_outbox_pending_deliveries',
      help: "Deliveries waiting: the submissions' outbox, project webhooks and change-request e-mails (every instance's: the tables are shared)",
      registers,
      async collect() {
        this.set((await sources.outbox.queueStats().catch(() => undefined))?.pending ?? Number.NaN);
      },
    });
    new prom.Gauge({
      name: 'flagpost_outbox_oldest_pending_age_seconds',
      help: 'Age of the oldest delivery waiting in any of those queues, 0 when none waits',
      registers,
      async collect() {
        this.set((await sources.outbox.queueStats().catch(() => undefined))?.oldestPendingSeconds ?? Number.NaN);
      },
    });
    new prom.Counter({
      name: 'flagpost_outbox_deliveries_total',
      help: "Delivery attempts of this process by outcome (the submissions' outbox, project webhooks, change-request e-mails): delivered, retry (failed, tried again later), failed (given up)",
      labelNames: ['outcome'],
      registers,
      collect() {
        this.reset();
        for (const [outcome, n] of Object.entries(sources.outbox.outcomes)) this.inc({ outcome }, n);
      },
    });
    this.submissions = new prom.Counter({
      name: 'flagpost_submissions_total',
      help: 'Form submissions by outcome (accepted, refused) and cause of a refusal (none for accepted)',
      labelNames: ['outcome', 'cause'],
      registers,
    });
    new prom.Gauge({
      name: 'flagpost_db_pool_connections',
      help: 'PostgreSQL pool connections by state: open, idle, waiting (clients waiting for one), max',
      labelNames: ['state'],
      registers,
      collect() {
        const stats = sources.database.poolStats?.();
        if (!stats) return;
        this.set({ state: 'open' }, stats.total);
        this.set({ state: 'idle' }, stats.idle);
        this.set({ state: 'waiting' }, stats.waiting);
        this.set({ state: 'max' }, stats.max);
      },
    });
  }

  /** An HTTP answer; `route` is the route template (`/v1/flags/:slug`), or `unmatched`. */
  httpAnswered(method: string, route: string, status: number, seconds: number): void {
    const statusClass = STATUS_CLASSES[Math.floor(status / 100) - 1] ?? 'other';
    const key = `${method} ${route} ${statusClass}`;
    let child = this.http.get(key);
    if (!child) {
      const labels = { method, route, status_class: statusClass };
      child = { requests: this.httpRequests.labels(labels), duration: this.httpDuration.labels(labels) };
      this.http.set(key, child);
    }
    child.requests.inc();
    child.duration.observe(seconds);
  }

  /** A form submission answered: accepted, or refused for `cause`. */
  submissionAnswered(accepted: boolean, cause: string): void {
    this.submissions.inc({ outcome: accepted ? 'accepted' : 'refused', cause: accepted ? 'none' : cause });
  }

  snapshotRebuilt(seconds: number): void {
    this.rebuildDuration.observe(seconds);
  }

  changePropagated(seconds: number): void {
    this.propagationDelay.observe(Math.max(0, seconds));
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of this process's metrics. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
