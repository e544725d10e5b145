import { buildApp } from './app.ts';
import { compose } from './compose.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { openDb } from './db/connect.ts';
import { migrateToLatest } from './db/migrate.ts';
import { MetricsServer } from './metrics/metrics-server.ts';

/**
 * At exit, how long the last log lines may wait for stdout, at most: a log collector that does not read
 * must not keep a stopping server alive (issue 19).
 */
const LOG_FLUSH_MS = 1000;

/** Process entry: loadConfig -> openDb -> migrate -> compose -> buildApp -> listen. */
async function main(): Promise<void> {
  warnOnOldNode(process.versions.node);
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

  const handle = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrateToLatest(handle.db);
  const services = await compose(config, handle);
  const app = await buildApp(services);

  if (services.createdAdminToken) {
    // Printed once, on the first start; only its hash is kept.
    process.stdout.write(
      `\nFlagpost created an admin token. Save it now, it will not be shown again:\n\n  ${services.createdAdminToken}\n\n` +
        'Set FLAGPOST_ADMIN_TOKEN to choose your own instead.\n\n',
    );
  }

  let metricsServer: MetricsServer | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal, droppedLogLines: services.droppedLogLines() }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error('shutdown took longer than 10 s, exiting');
      void services.flushLogs(LOG_FLUSH_MS).then(() => process.exit(1));
    }, 10_000);
    force.unref();
    try {
      await app.close(); // stops accepting, lets requests in flight finish
      await services.stop();
      await metricsServer?.close();
      await handle.close();
      app.log.info('stopped');
      await services.flushLogs(LOG_FLUSH_MS);
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      await services.flushLogs(LOG_FLUSH_MS);
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  if (services.metrics && config.metrics.port !== undefined) {
    // Its own listener: metrics never reach the public port (docs/adr/0036-metrics-and-traces.md).
    metricsServer = new MetricsServer(services.metrics, app.log);
    const port = await metricsServer.listen(config.metrics.host, config.metrics.port);
    app.log.info({ port, host: config.metrics.host }, 'metrics listening at /metrics');
  }
  if (config.flagdSync.port !== undefined) {
    const port = await services.flagdSyncServer.listen(config.flagdSync.host, config.flagdSync.port);
    app.log.info({ port, host: config.flagdSync.host }, 'flagd sync service listening');
  }
  app.log.info({ database: handle.dialect }, 'Flagpost is ready');
}

/** Node 20 still runs Flagpost, but gets no security fixes since 2026-04-30: say so on every start. */
function warnOnOldNode(version: string): void {
  const major = Number(version.split('.')[0]);
  if (major >= 22) return;
  process.stderr.write(
    `Warning: Node.js ${version} is end of life since 2026-04-30 and gets no security fixes. ` +
      'Flagpost is developed and tested on Node.js 24 LTS and supports 22.12 or later: upgrade Node.js.\n',
  );
}

main().catch((error) => {
  process.stderr.write(`Flagpost failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
