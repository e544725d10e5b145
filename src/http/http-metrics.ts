import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { surfaceOf } from './error-handler.ts';

/** What the HTTP edge reports to the metrics (src/metrics/metrics.ts). */
export interface HttpMetrics {
  httpAnswered(method: string, route: string, status: number, seconds: number): void;
  submissionAnswered(accepted: boolean, cause: string): void;
}

/** Causes of refused form submissions, by the status the form interface answered (a bounded set). */
const REFUSAL_CAUSES: Record<number, string> = {
  400: 'invalid',
  403: 'forbidden',
  404: 'unknown_form',
  408: 'timeout',
  413: 'too_large',
  415: 'unsupported_media_type',
  422: 'rejected',
  429: 'rate_limited',
  503: 'unavailable',
};

/**
 * Observes every answer Fastify sends: its route template (`request.routeOptions.url`, never the raw
 * path, so that slugs and keys cannot blow up the series; `unmatched` for 404s of unknown paths), its
 * status and Fastify's own elapsed time. Form submissions (POST of the form interface) are counted as
 * accepted or refused by cause too. Registered only when metrics are on.
 */
export function registerHttpMetrics(app: FastifyInstance, metrics: HttpMetrics): void {
  // A refused submission may still answer 303 (to the form's error page): the cause is the error's status.
  app.addHook('onError', async (request, _reply, error) => {
    if (request.method !== 'POST' || surfaceOf(request) !== 'forms') return;
    const e = error as { status?: unknown; statusCode?: unknown };
    const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : 500;
    (request as RefusedRequest)[REFUSAL] = REFUSAL_CAUSES[status] ?? (status >= 500 ? 'error' : 'other');
  });
  app.addHook('onResponse', async (request, reply) => {
    // A prefix's route answers with and without its trailing slash (`/v1/flags`, `/v1/flags/`): one series.
    const template = request.routeOptions.url;
    const route = template === undefined ? 'unmatched' : template.length > 1 && template.endsWith('/') ? template.slice(0, -1) : template;
    metrics.httpAnswered(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    if (request.method === 'POST' && surfaceOf(request) === 'forms') {
      const cause = (request as RefusedRequest)[REFUSAL] ?? (reply.statusCode >= 400 ? (REFUSAL_CAUSES[reply.statusCode] ?? 'other') : undefined);
      metrics.submissionAnswered(cause === undefined, cause ?? 'none');
    }
  });
}

const REFUSAL = Symbol('flagpost.submissionRefusal');
type RefusedRequest = FastifyRequest & { [REFUSAL]?: string };

/** The route template of a request the flag fast path answered (it answers only these paths). */
function fastPathRoute(url: string): string {
  const path = url.indexOf('?') === -1 ? url : url.slice(0, url.indexOf('?'));
  if (path === '/ofrep/v1/events') return path;
  if (path.startsWith('/ofrep/')) return path.length > '/ofrep/v1/evaluate/flags/'.length ? '/ofrep/v1/evaluate/flags/:key' : '/ofrep/v1/evaluate/flags';
  if (path === '/v1/flags' || path === '/v1/flags/') return '/v1/flags';
  return path === '/v1/flags/preview' ? '/v1/flags/preview' : '/v1/flags/:slug';
}

/** Observes the answers of the flag fast path (src/evaluation/flag.fast-path.ts), which bypasses Fastify's hooks. */
export class FastPathMetrics {
  constructor(private readonly metrics: HttpMetrics) {}

  readonly answered = (req: IncomingMessage, res: ServerResponse, started: number): void => {
    const done = () => this.metrics.httpAnswered(req.method ?? 'GET', fastPathRoute(req.url ?? ''), res.statusCode, (performance.now() - started) / 1000);
    if (res.writableFinished) done();
    else res.once('finish', done);
  };
}
