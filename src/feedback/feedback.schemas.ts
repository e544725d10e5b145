import { DESCRIPTION_MAX, MOODS } from './feedback.ts';

/** POST /v1/flags/preview/feedback (contract D10: unknown top-level fields are ignored). */
export const feedbackBody = {
  type: 'object',
  required: ['flagKey', 'mood', 'rating'],
  properties: {
    flagKey: { type: 'string', minLength: 1, maxLength: 150 },
    mood: { type: 'string', enum: MOODS },
    rating: { type: 'integer', minimum: 1, maximum: 5 },
    description: { type: ['string', 'null'], maxLength: DESCRIPTION_MAX },
    metadata: { type: ['object', 'null'] },
  },
} as const;

export const feedbackSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'flagKey', 'mood', 'rating', 'description', 'metadata', 'createdAt'],
  properties: {
    id: { type: 'string' },
    flagKey: { type: 'string' },
    mood: { type: 'string', enum: MOODS },
    rating: { type: 'integer' },
    description: { type: ['string', 'null'] },
    metadata: { type: ['object', 'null'], additionalProperties: true },
    createdAt: { type: 'string' },
  },
} as const;

export const feedbackCreatedSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['success', 'feedbackId'],
  properties: { success: { type: 'boolean', const: true }, feedbackId: { type: 'string' } },
} as const;

/** Over all of a flag's feedback in one environment, whatever the page. */
export const feedbackSummarySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['total', 'averageRating', 'moods'],
  properties: {
    total: { type: 'integer' },
    averageRating: { type: ['number', 'null'], description: 'Average rating, two decimals; null without feedback' },
    moods: { type: 'object', additionalProperties: { type: 'integer' }, description: 'Entries per mood' },
  },
} as const;
