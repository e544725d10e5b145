import cluster from 'node:cluster';
import { buildApp } from './app.ts';
import { runPrimary } from './cluster/primary.ts';
import { WorkerLink } from './cluster/worker-link.ts';
import { compose } from './compose.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { openDb } from './db/connect.ts';
import { migrateToLatest } from './db/migrate.ts';
import { serveStartupProbes } from './http/health.ts';
import { stopOnSignals } from './shutdown.ts';
import { ClusterMetrics, MetricsServer } from './metrics/metrics-server.ts';

/** Process entry: loadConfig -> openDb -> migrate -> compose -> buildApp -> listen. */
async function main(): Promise<void> {
  if (cluster.isPrimary) warnOnOldNode(process.versions.node);
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }

  // FLAGPOST_WORKERS > 1: this process becomes the primary (migrations, supervision) and forks the workers,
  // each of which runs the rest of this function (docs/adr/0029-workers.md).
  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config);
  const worker = WorkerLink.ofThisProcess();

  // While migrations run and the read model loads, the port answers the probes (/livez 200, /readyz 503);
  // a stop asked meanwhile ends the start (a migration's transaction rolls back whole). Workers share the
  // port with each other, so only a single process holds it with the probe server while it starts.
  const stopWhileStarting = () => process.exit(0);
  process.once('SIGTERM', stopWhileStarting).once('SIGINT', stopWhileStarting);
  const probes = config.port === 0 || worker ? undefined : await serveStartupProbes(config.port, config.host);
  const handle = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  if (!worker) await migrateToLatest(handle.db); // a worker's primary migrated before forking it
  const services = await compose(config, handle, { worker });
  const app = await buildApp(services);
  // Background work (change feeds, periodic jobs) starts once the app is built.
  await services.start();
  process.off('SIGTERM', stopWhileStarting).off('SIGINT', stopWhileStarting);

  if (services.createdAdminToken) {
    // Printed once, on the first start; only its hash is kept.
    process.stdout.write(
      `\nFlagpost created an admin token. Save it now, it will not be shown again:\n\n  ${services.createdAdminToken}\n\n` +
        'Set FLAGPOST_ADMIN_TOKEN to choose your own instead.\n\n',
    );
  }

  stopOnSignals({ app, services, closeDatabase: () => handle.close(), drainDelayMs: config.connections.drainDelayMs });

  // Its own listener: metrics never reach the public port (docs/adr/0036-metrics-and-traces.md). A worker
  // hands its registry to the primary, which serves every worker's metrics summed (cluster/primary.ts).
  let metricsServer: MetricsServer | undefined;
  if (services.metrics && worker) ClusterMetrics.forWorker(services.metrics.registry);
  else if (services.metrics) {
    metricsServer = new MetricsServer(services.metrics, app.log);
    app.addHook('onClose', () => metricsServer!.close());
  }

  await probes?.close();
  // With reusePort each worker binds its own socket and the kernel spreads connections over them; without
  // it the cluster module shares the primary's socket.
  await app.listen({ port: config.port, host: config.host, ...(worker?.reusePort ? { exclusive: true, reusePort: true } : {}) });
  // One flagd sync service per deployment of workers: the worker of slot 1 serves it.
  if (metricsServer && config.metrics.port !== undefined) {
    const port = await metricsServer.listen(config.metrics.host, config.metrics.port);
    app.log.info({ port, host: config.metrics.host }, 'metrics listening at /metrics');
  }
  if (config.flagdSync.port !== undefined && (worker?.runsJobs ?? true)) {
    const port = await services.flagdSyncServer.listen(config.flagdSync.host, config.flagdSync.port);
    app.log.info({ port, host: config.flagdSync.host }, 'flagd sync service listening');
  }
  if (worker) {
    worker.ready();
    app.log.info({ database: handle.dialect, slot: worker.slot, periodicJobs: worker.runsJobs }, 'worker ready');
  } else {
    app.log.info({ database: handle.dialect, dashboard: `${config.publicUrl}/` }, `Flagpost is ready: the dashboard is at ${config.publicUrl}/`);
  }
}

/**
 * Node 20 still runs Flagpost, but gets no security fixes since 2026-04-30, and 22.12 to 22.14 are older than
 * what the OpenTelemetry packages declare (22.15): say so on every start.
 */
function warnOnOldNode(version: string): void {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 15)) return;
  const why = major < 22 ? 'is end of life since 2026-04-30 and gets no security fixes' : 'is older than the 22.15 that the OpenTelemetry packages require';
  process.stderr.write(
    `Warning: Node.js ${version} ${why}. Flagpost is developed and tested on Node.js 24 LTS and supports 22.15 or later: upgrade Node.js.\n`,
  );
}

main().catch((error) => {
  process.stderr.write(`Flagpost failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
