import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { messages } from '../errors.ts';
import { errorBody } from './schemas.ts';

// Health endpoints for load balancers and orchestrators (issue 23), outside /v1 and /admin:
// - GET /livez: the process serves HTTP. Never touches the database, so that an orchestrator restarts a
//   stuck process, not one whose database is away (a restart would not bring the database back).
// - GET /readyz: send traffic here. 503 while the server starts (migrations run, the read model loads),
//   while the database does not answer, and from the moment a SIGTERM starts the drain.
// - GET /healthz: 200 while a database query succeeds (kept as it was).

/** Why /readyz says 503; sent as `status` beside the error object. */
export type NotReady = 'starting' | 'draining' | 'database-unavailable';

/** Whether this instance should receive traffic. One per process; main turns it to draining on SIGTERM. */
export class Readiness {
  private draining = false;

  /** @param databaseAnswers whether a query on the database succeeds now */
  constructor(readonly databaseAnswers: () => Promise<boolean>) {}

  /** From now on /readyz answers 503, whatever the database says (the start of a graceful stop). */
  drain(): void {
    this.draining = true;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** undefined when ready, else why not. */
  async check(): Promise<NotReady | undefined> {
    if (this.draining) return 'draining';
    return (await this.databaseAnswers()) ? undefined : 'database-unavailable';
  }
}

const status = (value: string) => ({
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: { status: { type: 'string', const: value } },
});

const notReadyBody = {
  ...errorBody,
  properties: { ...errorBody.properties, status: { type: 'string', enum: ['starting', 'draining', 'database-unavailable'] } },
};

/** A health body ends with a newline, so that `curl /healthz` in a terminal leaves the prompt on its own line. */
const endLine = async (_request: unknown, _reply: unknown, payload: unknown) => (typeof payload === 'string' ? `${payload}\n` : payload);

/** The three health routes; none counts against the rate limit or needs a credential. */
export async function registerHealth(app: FastifyInstance, readiness: Readiness): Promise<void> {
  app.get(
    '/healthz',
    { onSend: endLine, schema: { summary: 'Health: 200 while the database answers, 503 otherwise', response: { 200: status('ok'), 503: errorBody } } },
    async (_request, reply) => {
      if (await readiness.databaseAnswers()) return reply.header('cache-control', 'no-store').send({ status: 'ok' });
      return reply.code(503).header('cache-control', 'no-store').send({ error: true, message: messages.serviceUnavailable });
    },
  );

  app.get(
    '/livez',
    { onSend: endLine, schema: { summary: 'Liveness: 200 while the process serves HTTP; never asks the database', response: { 200: status('ok') } } },
    async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      onSend: endLine,
      schema: {
        summary: 'Readiness: 200 while this instance should get traffic; 503 while starting, draining (SIGTERM) or without its database',
        response: { 200: status('ready'), 503: notReadyBody },
      },
    },
    async (_request, reply) => {
      const notReady = await readiness.check();
      reply.header('cache-control', 'no-store');
      if (notReady === undefined) return reply.send({ status: 'ready' });
      return reply.code(503).send({ error: true, message: messages.serviceUnavailable, status: notReady });
    },
  );
}

/**
 * Answers the probes while the server starts (migrations, loading), before the application listens:
 * /livez 200, /readyz 503 `starting`, anything else 503 with `Retry-After`. Closed (with its
 * connections) just before the application takes the port over.
 */
export async function serveStartupProbes(port: number, host: string): Promise<{ close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    const live = request.method === 'GET' && path === '/livez';
    const body = live
      ? { status: 'ok' }
      : { error: true, message: messages.serviceUnavailable, ...(path === '/readyz' ? { status: 'starting' satisfies NotReady } : {}) };
    response.writeHead(live ? 200 : 503, {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'close',
      ...(live ? {} : { 'retry-after': '5' }),
    });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
