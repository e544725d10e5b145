import type { FastifyInstance } from 'fastify';
import type { Readiness } from './http/health.ts';

/** What the drain needs of the composed services (src/compose.ts). */
export interface Drainable {
  readonly readiness: Readiness;
  readonly streams: { closeAll(): void };
  readonly flagdSyncServer: { close(): Promise<void> };
  droppedLogLines(): number;
  flushLogs(deadlineMs: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ShutdownOptions {
  app: FastifyInstance;
  services: Drainable;
  closeDatabase: () => Promise<void>;
  /** After SIGTERM, how long /readyz says 503 while everything else is still served (FLAGPOST_DRAIN_DELAY_MS). */
  drainDelayMs: number;
}

/**
 * At exit, how long the last log lines may wait for stdout, at most: a log collector that does not read
 * must not keep a stopping server alive (issue 19).
 */
const LOG_FLUSH_MS = 1000;
/** The drain proper (streams, requests in flight, background work) must end within this, else exit 1. */
const GRACE_MS = 10_000;

/**
 * A graceful stop on SIGTERM (issue 23), in this order:
 * 1. /readyz turns 503, so that load balancers and orchestrators stop sending new traffic here; for
 *    `drainDelayMs` everything else is still served as usual while they notice;
 * 2. event streams are told to reconnect elsewhere: OFREP event streams end with a reconnection delay,
 *    flagd sync streams end with UNAVAILABLE (what flagd providers retry on);
 * 3. requests drain: the port stops accepting, requests in flight are answered, idle connections close;
 * 4. background work stops, the database closes, the last log lines leave, exit 0.
 * SIGINT (Ctrl-C) does the same without the delay.
 */
export function stopOnSignals({ app, services, closeDatabase, drainDelayMs }: ShutdownOptions): void {
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    services.readiness.drain();
    const delayMs = signal === 'SIGTERM' ? drainDelayMs : 0;
    app.log.info({ signal, drainDelayMs: delayMs, droppedLogLines: services.droppedLogLines() }, 'shutting down: /readyz answers 503');
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const force = setTimeout(() => {
      app.log.error(`shutdown took longer than ${GRACE_MS / 1000} s, exiting`);
      void services.flushLogs(LOG_FLUSH_MS).then(() => process.exit(1));
    }, GRACE_MS);
    force.unref();
    try {
      services.streams.closeAll();
      await services.flagdSyncServer.close();
      await app.close();
      await services.stop();
      await closeDatabase();
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
}
