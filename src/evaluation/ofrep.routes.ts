import { recordOfrepExposure } from './exposure-port.ts';
import cors from '@fastify/cors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toErrorAnswer } from '../http/error-handler.ts';
import type { RoutePlugin } from '../http/schemas.ts';
import { chooseEncoding, compressible, representationOf } from './compression.ts';
import { etagMatches } from './flag.cache-headers.ts';
import type { CachedAnswer, EnvironmentSnapshot, FlagReadModel } from './flag.read-model.ts';
import { ofrepFlagNotFound } from './ofrep.answers.ts';
import { countOfrepRead, evaluateOfrepBulk, evaluateOfrepFlag, ofrepKnows, type OfrepRequest, parseOfrepRequest } from './ofrep.evaluation.ts';
import type { OfrepStreams, StreamTokens } from './ofrep.streams.ts';

// OFREP 0.3 (issue 10, docs/adr/0014-ofrep.md) under /ofrep/v1: the single and bulk evaluations, parsed
// and evaluated by read/ofrep.evaluation.ts (as the fast path does), and the event stream of an environment. Errors take
// OFREP's shapes, not the flag interface's: 400 {key?, errorCode, errorDetails}, 401/403 for missing or
// unknown keys, 404 FLAG_NOT_FOUND, 429 with Retry-After, 500 {errorDetails}.

export interface OfrepRouteDeps {
  reads: FlagReadModel;
  streams: OfrepStreams;
  tokens: StreamTokens;
}

/** OFREP's error answer, thrown by the routes and shaped by the scope's error handler. */
class OfrepError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body.errorDetails ?? body.errorCode));
  }
}

const contextSchema = {
  description: 'The evaluation context (targetingKey and attributes that rules read); none is the empty context',
  type: ['object', 'null'],
  additionalProperties: true,
} as const;

const evaluationBody = {
  type: 'object',
  additionalProperties: true,
  properties: { context: contextSchema },
} as const;

const keyHeadersSchema = {
  type: 'object',
  properties: {
    'x-project-key': { type: 'string', description: 'The project key' },
    'x-environment-key': { type: 'string', description: 'The environment key' },
  },
} as const;

const anyAnswer = { description: 'OFREP answer (see the OFREP OpenAPI document)', type: 'object', additionalProperties: true } as const;

function keysOf(request: FastifyRequest): { projectKey: string; environmentKey: string } {
  const projectKey = request.headers['x-project-key'];
  const environmentKey = request.headers['x-environment-key'];
  if (typeof projectKey !== 'string' || projectKey === '' || typeof environmentKey !== 'string' || environmentKey === '') {
    throw new OfrepError(401, { errorCode: 'GENERAL', errorDetails: 'Missing required headers: x-project-key and x-environment-key' });
  }
  return { projectKey, environmentKey };
}

async function snapshotOf(reads: FlagReadModel, request: FastifyRequest): Promise<EnvironmentSnapshot> {
  const { projectKey, environmentKey } = keysOf(request);
  const snapshot = await reads.get(projectKey, environmentKey);
  if (!snapshot) throw new OfrepError(403, { errorCode: 'GENERAL', errorDetails: 'Unknown project or environment key' });
  return snapshot;
}

/** The request's context, or OFREP's 400 for a body that is not JSON or a context that is no object. */
function requestOf(body: unknown, key?: string): OfrepRequest & { problem?: undefined } {
  const request = parseOfrepRequest(typeof body === 'string' ? body : '', key);
  if (request.problem) throw new OfrepError(400, JSON.parse(request.problem.body) as Record<string, unknown>);
  return request;
}

function sendAnswer(reply: FastifyReply, answer: CachedAnswer): FastifyReply {
  return reply.code(answer.status).header('cache-control', 'no-store').type('application/json; charset=utf-8').send(answer.bytes);
}

export const ofrepRoutes: RoutePlugin<OfrepRouteDeps> = async (app, { reads, streams, tokens }) => {
  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'POST'],
    allowedHeaders: ['Content-Type', 'If-None-Match', 'x-project-key', 'x-environment-key', 'Last-Event-ID'],
    exposedHeaders: ['ETag'],
    maxAge: 86400,
    strictPreflight: false,
  });
  app.addHook('onRoute', (route) => {
    route.config = { surface: 'ofrep', ...route.config };
    route.schema = { tags: ['ofrep'], ...route.schema };
  });

  // Lenient bodies: OpenFeature providers may send no body, an empty one, or no Content-Type at all.
  // The text is read by parseOfrepRequest, as the fast path reads it.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  app.setErrorHandler((error: unknown, request, reply) => {
    if (error instanceof OfrepError) return reply.code(error.status).header('cache-control', 'no-store').send(error.body);
    const answer = toErrorAnswer(error, 'ofrep');
    if (answer.unexpected) request.log.error({ err: error }, 'OFREP request failed');
    if (answer.retryAfter) reply.header('retry-after', String(answer.retryAfter));
    const errorCode = answer.status === 400 ? 'PARSE_ERROR' : 'GENERAL';
    const body = answer.status >= 500 ? { errorDetails: String(answer.body.message) } : { errorCode, errorDetails: String(answer.body.message) };
    return reply.code(answer.status).header('cache-control', 'no-store').send(body);
  });

  app.post(
    '/evaluate/flags/:key',
    {
      schema: {
        summary: 'OFREP: evaluate one flag (`<slug>` is its on/off state, `<slug>:payload` its payload object)',
        params: { type: 'object', required: ['key'], properties: { key: { type: 'string' } } },
        headers: keyHeadersSchema,
        body: evaluationBody,
        response: { 200: anyAnswer, '4xx': anyAnswer, '5xx': anyAnswer },
      },
      // The body is read by parseOfrepRequest: OFREP answers its own error shapes.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const { key } = request.params;
      const { context } = requestOf(request.body, key);
      const snapshot = await snapshotOf(reads, request);
      if (!ofrepKnows(snapshot, key)) {
        reads.usage.notFound();
        return reply.code(404).header('cache-control', 'no-store').send(ofrepFlagNotFound(key));
      }
      const evaluated = evaluateOfrepFlag(snapshot, key, context);
      countOfrepRead(reads.usage, snapshot, key, evaluated);
      recordOfrepExposure(reads.exposures, snapshot, key, context, evaluated);
      return sendAnswer(reply, evaluated.answer);
    },
  );

  app.post(
    '/evaluate/flags',
    {
      schema: {
        summary: 'OFREP: evaluate every flag of the environment (ETag, 304 on If-None-Match, event stream)',
        headers: keyHeadersSchema,
        querystring: {
          type: 'object',
          properties: {
            flagConfigEtag: { type: 'string', description: 'The etag of the event that asked for this refetch' },
            flagConfigLastModified: { type: 'string', description: 'The lastModified of that event' },
          },
        },
        body: evaluationBody,
        response: { 200: anyAnswer, 304: { description: 'Not modified' }, '4xx': anyAnswer, '5xx': anyAnswer },
      },
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const { context } = requestOf(request.body);
      let snapshot = await snapshotOf(reads, request);
      // A refetch told by an event stream names the version it expects (OFREP flagConfigEtag).
      const expected = request.query.flagConfigEtag;
      if (typeof expected === 'string' && expected !== '') {
        const { projectKey, environmentKey } = keysOf(request);
        snapshot = (await reads.refreshIfStale(projectKey, environmentKey, expected)) ?? snapshot;
      }
      const evaluated = evaluateOfrepBulk(snapshot, context);
      countOfrepRead(reads.usage, snapshot, undefined, evaluated);
      const { answer, ready } = evaluated;
      if (answer.status !== 200) return sendAnswer(reply, answer);
      // An answer evaluated for this context is sent once: compressing it would cost more than it saves.
      const variable = ready && compressible(answer);
      const representation = representationOf(answer, variable ? chooseEncoding(request.headers['accept-encoding']) : undefined);
      reply.header('etag', representation.etag).header('cache-control', 'no-store');
      if (variable) reply.header('vary', 'accept-encoding');
      if (etagMatches(request.headers['if-none-match'], answer.etag)) return reply.code(304).send();
      if (representation.encoding) reply.header('content-encoding', representation.encoding);
      return reply.code(200).type('application/json; charset=utf-8').send(representation.bytes);
    },
  );

  app.get(
    '/events',
    {
      schema: {
        summary: "OFREP: the environment's event stream (Server-Sent Events); its URL comes from the bulk answer's eventStreams",
        querystring: { type: 'object', properties: { stream: { type: 'string' } } },
        response: { 200: { description: 'text/event-stream' }, '4xx': anyAnswer, '5xx': anyAnswer },
      },
    },
    async (request, reply) => {
      const keys = tokens.parse(request.query.stream ?? '');
      if (!keys) throw new OfrepError(401, { errorCode: 'GENERAL', errorDetails: 'Missing or invalid stream token' });
      const snapshot = await reads.get(keys.projectKey, keys.environmentKey);
      if (!snapshot) throw new OfrepError(403, { errorCode: 'GENERAL', errorDetails: 'Unknown project or environment key' });
      const refusal = streams.refusal(request.ip);
      if (refusal === 'client') {
        reply.header('retry-after', '30');
        throw new OfrepError(429, { errorCode: 'GENERAL', errorDetails: 'Too many open event streams from this address' });
      }
      if (refusal === 'total') {
        reply.header('retry-after', '30');
        throw new OfrepError(503, { errorCode: 'GENERAL', errorDetails: 'Too many open event streams on this server' });
      }
      const lastEventId = request.headers['last-event-id'];
      reply.hijack();
      // With x-request-id like every other answer (the onSend hook does not run for a hijacked reply).
      streams.open(
        reply.raw,
        { client: request.ip, ...keys },
        snapshot.environmentId,
        snapshot.version,
        typeof lastEventId === 'string' ? lastEventId : undefined,
        request.id,
      );
    },
  );
};
