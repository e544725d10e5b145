import http from 'node:http';
import cluster from 'node:cluster';
import type * as client from 'prom-client';
import { loadPromClient } from '../optional-packages.ts';

/** Where the listener takes the exposition from: this process's registry, or every worker's (cluster). */
export interface MetricsSource {
  readonly contentType: string;
  text(): Promise<string>;
}

/**
 * The metrics of every worker of a cluster (FLAGPOST_WORKERS), summed by prom-client's
 * AggregatorRegistry: counters and histograms add up, gauges too (open streams of all workers). Used by
 * the primary process, which serves FLAGPOST_METRICS_PORT while the workers serve the public port; each
 * worker answers the primary's request with its registry (`register` it with forWorker()).
 */
export class ClusterMetrics implements MetricsSource {
  private readonly aggregator = new (loadPromClient().AggregatorRegistry)();
  readonly contentType = loadPromClient().AggregatorRegistry.PROMETHEUS_CONTENT_TYPE;

  /** In a worker: the registry the primary's ClusterMetrics collects from this process. */
  static forWorker(registry: client.Registry): void {
    if (!cluster.isWorker) return;
    const { AggregatorRegistry } = loadPromClient();
    AggregatorRegistry.setRegistries([registry]);
    // prom-client starts answering the primary's requests when an AggregatorRegistry is built.
    new AggregatorRegistry();
  }

  async text(): Promise<string> {
    return (await this.aggregator.clusterMetrics()).toString();
  }
}

/**
 * The metrics listener: GET /metrics in Prometheus text format on a port of its own
 * (FLAGPOST_METRICS_PORT), so that metrics never reach the public port and its proxies. Everything else
 * is 404; a failing collection is 500 with its message in the log, not in the answer.
 */
export class MetricsServer {
  private readonly server: http.Server;

  constructor(
    source: MetricsSource,
    private readonly log: { error(obj: object, msg: string): void },
  ) {
    this.server = http.createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: metrics are at GET /metrics\n');
        return;
      }
      source.text().then(
        (text) => res.writeHead(200, { 'content-type': source.contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text),
        (error: unknown) => {
          this.log.error({ err: error }, 'metrics collection failed');
          res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics collection failed\n');
        },
      );
    });
    this.server.keepAliveTimeout = 65_000;
  }

  /** Listens on host and port (0: any free port); answers the port bound. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as { port: number }).port);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
