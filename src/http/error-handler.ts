import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/outage.ts';
import { BODY_TIMEOUT_CODE } from './request-deadline.ts';
import { AppError, type FieldProblem, message, messages } from '../errors.ts';

/**
 * Which public surface a route belongs to. The specification answers a server error with 400 on
 * most flag endpoints and with 500 on GET /flags/preview; admin routes use plain HTTP semantics.
 */
export type Surface = 'flags' | 'flags-preview' | 'ofrep' | 'track' | 'admin' | 'forms' | 'system';

declare module 'fastify' {
  interface FastifyContextConfig {
    surface?: Surface;
  }
}

const serverErrorStatus: Record<Surface, number> = {
  flags: 400,
  'flags-preview': 500,
  ofrep: 500,
  track: 500,
  admin: 500,
  forms: 500,
  system: 500,
};

export interface ErrorAnswer {
  status: number;
  body: Record<string, unknown>;
  /** True for errors that are not the client's: they are logged with the request id. */
  unexpected: boolean;
  /** Seconds a client should wait before trying again (503 while the database is away). */
  retryAfter?: number;
}

/** Retry-After of a 503 during a database outage: background loops retry within a few seconds too. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

/**
 * Maps any thrown value to the specification's error object (contract D8). Only AppError messages
 * and the registry's texts reach the client: never a stack, never a driver message.
 */
export function toErrorAnswer(error: unknown, surface: Surface): ErrorAnswer {
  const publicApi = surface === 'flags' || surface === 'flags-preview';
  if (error instanceof AppError) {
    const body: Record<string, unknown> = { error: true, message: error.message };
    if (error.options.details) body.details = error.options.details;
    return { status: error.status, body, unexpected: false, retryAfter: error.options.retryAfterSeconds };
  }
  const fe = error as Partial<FastifyError> & { validation?: Array<Record<string, unknown>>; validationContext?: string };
  if (fe.validation) {
    const details = fe.validation.map((v) => toProblem(v as unknown as Record<string, unknown>, fe.validationContext));
    return { status: 400, body: { error: true, message: publicApi ? messages.generic : messages.validationFailed, details }, unexpected: false };
  }
  if (fe.code === BODY_TIMEOUT_CODE) {
    return { status: 408, body: { error: true, message: messages.requestTimeout }, unexpected: false };
  }
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return { status: 413, body: { error: true, message: messages.bodyTooLarge }, unexpected: false };
  }
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    // The flag interface knows only 400 for an invalid request (interface.md wins over contract D8's 415).
    if (publicApi) return { status: 400, body: { error: true, message: messages.generic }, unexpected: false };
    return { status: 415, body: { error: true, message: messages.unsupportedMediaType }, unexpected: false };
  }
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    // Malformed JSON, empty JSON body, bad Content-Length, prototype poisoning and the like.
    if (status === 429) return { status, body: { error: true, message: messages.tooManyRequests }, unexpected: false };
    return { status: 400, body: { error: true, message: publicApi ? messages.generic : messages.validationFailed }, unexpected: false };
  }
  if (isDatabaseUnavailable(error) && !publicApi) {
    // Not the client's fault and not a bug: the database is away. The flag interface keeps the
    // specification's statuses (its warm reads do not need the database at all).
    return { status: 503, body: { error: true, message: messages.serviceUnavailable }, unexpected: false, retryAfter: OUTAGE_RETRY_AFTER_SECONDS };
  }
  return { status: serverErrorStatus[surface], body: { error: true, message: messages.generic }, unexpected: true };
}

function toProblem(v: Record<string, unknown>, context = 'body'): FieldProblem {
  const params = (v.params ?? {}) as Record<string, unknown>;
  const path = String(v.instancePath ?? '')
    .split('/')
    .filter(Boolean)
    .join('.');
  const missing = typeof params.missingProperty === 'string' ? params.missingProperty : undefined;
  const extra = typeof params.additionalProperty === 'string' ? params.additionalProperty : undefined;
  const field = [context, path, missing ?? extra].filter(Boolean).join('.');
  return { field, reason: String(v.message ?? 'is invalid') };
}

export function surfaceOf(request: FastifyRequest): Surface {
  return request.routeOptions.config?.surface ?? 'system';
}

/** The one error handler of the app; forms install their own answer format on top of toErrorAnswer. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const answer = toErrorAnswer(error, surfaceOf(request));
    if (answer.unexpected) request.log.error({ err: error }, 'request failed');
    else if (answer.retryAfter && !(error instanceof AppError)) request.log.warn({ err: error }, 'database unavailable');
    else request.log.info({ status: answer.status, code: (error as FastifyError).code }, 'request refused');
    if (answer.retryAfter) reply.header('retry-after', String(answer.retryAfter));
    // The rest of a body that timed out is not waited for.
    if (answer.status === 408) reply.header('connection', 'close');
    return reply.code(answer.status).header('cache-control', 'no-store').send(answer.body);
  });
  app.setNotFoundHandler(notFound);
}

/** 404 JSON for unknown routes and wrong methods (docs/adr/0004-error-statuses.md). */
export function notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const url = request.url.length > 200 ? `${request.url.slice(0, 200)}...` : request.url;
  return reply
    .code(404)
    .header('cache-control', 'no-store')
    .send({ error: true, message: message('routeNotFound', { method: request.method, url }) });
}
