import { SLUG_MAX_LENGTH, SLUG_PATTERN } from './flag.ts';

const flagValueProperties = {
  enabled: { type: 'boolean' },
  payload: { type: ['object', 'null'] },
  expiredAt: { type: ['string', 'null'], format: 'date-time' },
  description: { type: ['string', 'null'], maxLength: 2000 },
  isPreview: { type: 'boolean' },
  previewName: { type: ['string', 'null'], maxLength: 200 },
  previewContent: { type: ['object', 'null'] },
} as const;

export const createFlagBody = {
  type: 'object',
  required: ['slug'],
  additionalProperties: false,
  properties: {
    slug: { type: 'string', minLength: 1, maxLength: SLUG_MAX_LENGTH, pattern: SLUG_PATTERN },
    ...flagValueProperties,
  },
} as const;

export const updateFlagBody = {
  type: 'object',
  additionalProperties: false,
  properties: flagValueProperties,
} as const;
