import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';

// Building blocks of the route schemas (schema-first routes: the JSON schemas are the one source of
// truth for validation, for the handlers' types through the json-schema-to-ts type provider, and for
// the OpenAPI document at GET /openapi.json).

/** A route plugin whose handlers get their types from their schemas. */
export type RoutePlugin<Options extends object = Record<never, never>> = FastifyPluginAsyncJsonSchemaToTs<{ Options: Options }>;

/** The specification's error object (contract D8): never a stack, never a driver message. */
export const errorBody = {
  type: 'object',
  description: 'The error object of the specification',
  required: ['error', 'message'],
  properties: {
    error: { type: 'boolean', const: true },
    message: { type: 'string' },
    details: {
      type: 'array',
      description: 'The fields that failed validation (400 answers of the admin API)',
      items: { type: 'object', required: ['field', 'reason'], properties: { field: { type: 'string' }, reason: { type: 'string' } } },
    },
  },
} as const;

/** The error answers every admin route can give besides its own: 400, 401, 404, 409, 413 and 415 carry the error object. */
export const adminErrors = { '4xx': errorBody, '5xx': errorBody } as const;

/** Error answers of the public interfaces. */
export const publicErrors = { '4xx': errorBody, '5xx': errorBody } as const;

/** An answer without a body (204, 304). */
export const noContent = { description: 'No content' } as const;

export const isoTimestamp = { type: 'string', description: 'ISO-8601 UTC date-time' } as const;

/** Any JSON object, kept as sent. */
export const anyObject = { type: 'object', additionalProperties: true } as const;

/** `nextCursor` of paged listings: pass it as `cursor` to get the next page; null on the last page. */
export const nextCursor = { type: ['string', 'null'] } as const;
