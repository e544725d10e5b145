import { isoTimestamp } from '../http/schemas.ts';
import { WEBHOOK_EVENTS, WEBHOOK_PRESETS } from './webhook.ts';

export const webhookParams = {
  type: 'object',
  required: ['projectKey', 'id'],
  properties: { projectKey: { type: 'string' }, id: { type: 'string', description: "The webhook's id" } },
} as const;

export const deliveryParams = {
  type: 'object',
  required: ['projectKey', 'id', 'deliveryId'],
  properties: { ...webhookParams.properties, deliveryId: { type: 'string', description: "The delivery's id" } },
} as const;

const eventsSchema = {
  type: 'array',
  items: { type: 'string', enum: WEBHOOK_EVENTS },
  minItems: 1,
  uniqueItems: true,
  description: 'The events to deliver; all of them when omitted',
} as const;

const url = { type: 'string', minLength: 1, maxLength: 2000, description: 'Where events are POSTed (http or https)' } as const;

export const createWebhookBody = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url,
    events: eventsSchema,
    preset: { type: 'string', enum: WEBHOOK_PRESETS, description: "Send the chat service's message, unsigned, instead of the signed event" },
  },
} as const;

export const updateWebhookBody = {
  type: 'object',
  additionalProperties: false,
  properties: { url, events: eventsSchema },
} as const;

const webhookProperties = {
  id: { type: 'string' },
  url: { type: 'string', description: "Shown as '[redacted]' to viewers" },
  events: { type: 'array', items: { type: 'string', enum: WEBHOOK_EVENTS } },
  preset: { type: ['string', 'null'], enum: [...WEBHOOK_PRESETS, null] },
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
} as const;

export const webhookSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'url', 'events', 'preset', 'createdAt', 'updatedAt'],
  properties: webhookProperties,
} as const;

/** The creation answer: the only time the signing secret is shown. */
export const createdWebhookSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'url', 'events', 'preset', 'createdAt', 'updatedAt', 'secret'],
  properties: {
    ...webhookProperties,
    secret: { type: ['string', 'null'], description: 'The Standard Webhooks signing secret (whsec_...), shown once; null for presets' },
  },
} as const;

const attemptSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['attempt', 'startedAt', 'durationMs', 'ok', 'statusCode', 'error'],
  properties: {
    attempt: { type: 'integer' },
    startedAt: isoTimestamp,
    durationMs: { type: 'integer' },
    ok: { type: 'boolean' },
    statusCode: { type: ['integer', 'null'] },
    error: { type: ['string', 'null'] },
  },
} as const;

export const webhookDeliverySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'seq', 'event', 'status', 'attempts', 'nextAttemptAt', 'lastError', 'createdAt', 'deliveredAt', 'payload', 'history'],
  properties: {
    id: { type: 'string', description: 'Also the webhook-id header of its requests' },
    seq: { type: 'integer', description: "The event's place in the webhook's order" },
    event: { type: 'string', enum: WEBHOOK_EVENTS },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempts: { type: 'integer' },
    nextAttemptAt: { type: ['string', 'null'] },
    lastError: { type: ['string', 'null'] },
    createdAt: isoTimestamp,
    deliveredAt: { type: ['string', 'null'] },
    payload: { type: 'string', description: 'The exact body sent' },
    history: { type: 'array', items: attemptSchema },
  },
} as const;

export const deliveriesQuery = {
  type: 'object',
  additionalProperties: false,
  // Query text is not coerced (app.ts): the limit is read as text and checked by parseLimit, as on other listings.
  properties: { limit: { type: 'string', maxLength: 10, description: 'At most this many, newest first (1 to 200, default 50)' } },
} as const;
