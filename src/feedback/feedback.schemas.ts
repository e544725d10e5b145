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
