import cors from '@fastify/cors';
import type { FastifyRequest } from 'fastify';
import { AppError, messages } from '../errors.ts';
import { errorBody, type RoutePlugin } from '../http/schemas.ts';
import { MAX_EVENTS_PER_BATCH, MAX_TRACK_BODY_BYTES } from './event.ts';
import type { EventService } from './event.service.ts';

const trackBody = {
  type: 'object',
  description: `At most ${MAX_EVENTS_PER_BATCH} events and 1 MiB; checked event by event (the first problem is answered)`,
  properties: {
    events: {
      type: 'array',
      items: {
        type: 'object',
        description:
          '`{"kind":"exposure","flagKey","variant","targetingKey","timestamp"?}` or `{"kind":"track","name","targetingKey","value"?,"timestamp"?,"attributes"?}`',
      },
    },
  },
} as const;

const keyHeaders = {
  type: 'object',
  properties: {
    'x-project-key': { type: 'string', description: 'The project key (the flag interface credentials)' },
    'x-environment-key': { type: 'string', description: 'The environment key' },
  },
} as const;

const keyQuery = {
  type: 'object',
  properties: {
    projectKey: { type: 'string', description: 'The project key, for navigator.sendBeacon, which cannot send headers' },
    environmentKey: { type: 'string', description: 'The environment key, for navigator.sendBeacon' },
  },
} as const;

function keysOf(request: FastifyRequest) {
  const q = request.query as Record<string, unknown>;
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const query = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const projectKey = header('x-project-key') ?? query(q.projectKey);
  const environmentKey = header('x-environment-key') ?? query(q.environmentKey);
  if (!projectKey || !environmentKey) throw new AppError('unauthorized', messages.clientKeysMissing);
  return { projectKey, environmentKey };
}

/**
 * POST /v1/track (issue 32): exposures and tracked events of clients, with the flag interface's client
 * keys, CORS as OFREP, rate limited as OFREP. A body sent as text/plain (navigator.sendBeacon) is read
 * as JSON too, with the same guard against prototype keys. 202 `{"accepted":N}` once committed.
 */
export const trackRoutes: RoutePlugin<{ events: EventService }> = async (app, { events }) => {
  await app.register(cors, {
    origin: '*',
    methods: ['POST'],
    allowedHeaders: ['Content-Type', 'x-project-key', 'x-environment-key'],
    maxAge: 86400,
    strictPreflight: false,
  });
  app.addHook('onRoute', (route) => {
    route.config = { surface: 'track', ...route.config };
    route.schema = { tags: ['experiments'], ...route.schema };
  });
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'text/plain'], { parseAs: 'string', bodyLimit: MAX_TRACK_BODY_BYTES }, json);

  app.post(
    '/',
    {
      bodyLimit: MAX_TRACK_BODY_BYTES,
      schema: {
        summary: 'Track events: exposures and tracked events of users (202 once stored)',
        headers: keyHeaders,
        querystring: keyQuery,
        body: trackBody,
        response: {
          202: { type: 'object', required: ['accepted'], properties: { accepted: { type: 'integer' } } },
          '4xx': errorBody,
          '5xx': errorBody,
        },
      },
      // The events are checked by parseEvents, which names the first problem (`events[3].variant: required`).
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const { projectKey, environmentKey } = keysOf(request);
      const accepted = await events.track(projectKey, environmentKey, request.body);
      return reply.code(202).header('cache-control', 'no-store').send({ accepted });
    },
  );
};
