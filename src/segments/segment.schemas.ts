import { OPERATORS } from '../targeting/index.ts';
import { SEGMENT_KEY_MAX_LENGTH, SEGMENT_KEY_PATTERN } from './segment.ts';

// JSON schemas of the targeting model's shapes (src/targeting/targeting.ts) as the admin API takes and
// answers them. They check shape; the engine's validation (`targetingProblem`) checks meaning (known
// variants, operands an operator can use, bounded regular expressions) and names the path of a problem.

export const conditionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['attribute', 'operator', 'values'],
  properties: {
    attribute: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'Dot path into the evaluation context (`user.country`); `targetingKey` is the key',
    },
    operator: { type: 'string', enum: OPERATORS },
    values: {
      type: 'array',
      maxItems: 1000,
      items: { type: ['string', 'number', 'boolean'] },
      description: 'Operands: one for most operators, the set for `in`, none for `exists`; dates ISO-8601 or `now`',
    },
    negate: { type: 'boolean' },
    caseInsensitive: { type: 'boolean' },
  },
} as const;

const segmentKey = { type: 'string', minLength: 1, maxLength: SEGMENT_KEY_MAX_LENGTH, pattern: SEGMENT_KEY_PATTERN } as const;

export const segmentValuesProperties = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 2000 },
  match: { type: 'string', enum: ['all', 'any'], description: '`all`: every condition holds; `any`: at least one does' },
  conditions: { type: 'array', minItems: 1, maxItems: 50, items: conditionSchema },
} as const;

export const createSegmentBody = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'conditions'],
  properties: { key: segmentKey, ...segmentValuesProperties },
} as const;

export const updateSegmentBody = { type: 'object', additionalProperties: false, properties: segmentValuesProperties } as const;

export const segmentParams = {
  type: 'object',
  required: ['projectKey', 'segmentKey'],
  properties: { projectKey: { type: 'string' }, segmentKey: { type: 'string' } },
} as const;

export const segmentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'name', 'description', 'match', 'conditions', 'createdAt', 'updatedAt', 'version'],
  properties: {
    key: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    match: { type: 'string', enum: ['all', 'any'] },
    conditions: { type: 'array', items: conditionSchema },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    version: { type: 'integer', description: 'Incremented by every write; change requests are based on one' },
  },
} as const;
