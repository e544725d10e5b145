import { conditionSchema } from '../segments/index.ts';

// Schemas of the playground (and the environment parameters the flagd routes share).

export const environmentParams = {
  type: 'object',
  required: ['projectKey', 'envKey'],
  properties: { projectKey: { type: 'string' }, envKey: { type: 'string', description: "The environment's key" } },
} as const;

const keys = { type: 'array', items: { type: 'string' } } as const;

export const playgroundBody = {
  type: 'object',
  additionalProperties: false,
  required: ['context'],
  properties: {
    context: {
      type: 'object',
      additionalProperties: true,
      description: 'The evaluation context, as an OFREP request sends it (`targetingKey` and attributes)',
    },
    flag: { type: 'string', description: 'One flag to evaluate; every flag of the environment when absent' },
  },
} as const;

const conditionResult = {
  type: 'object',
  additionalProperties: false,
  required: ['condition', 'held'],
  properties: { condition: conditionSchema, held: { type: 'boolean' } },
} as const;

const explanationSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['prerequisites', 'rules', 'jsonLogic'],
  description: 'Why: null for a flag without targeting (its answer is fixed)',
  properties: {
    matchedRuleId: { type: 'string', description: 'The rule that served, when one did' },
    jsonLogic: { type: 'boolean', description: 'True for imported JSON Logic, which is not explained rule by rule' },
    prerequisites: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['flag', 'variants', 'held'],
        properties: { flag: { type: 'string' }, variants: keys, variant: { type: 'string' }, held: { type: 'boolean' } },
      },
    },
    rules: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name', 'enabled', 'held', 'conditions', 'segments'],
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          enabled: { type: 'boolean' },
          held: { type: 'boolean', description: 'Every condition and segment held (false for a switched-off rule)' },
          conditions: { type: 'array', items: conditionResult },
          segments: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['key', 'held', 'conditions'],
              properties: { key: { type: 'string' }, held: { type: 'boolean' }, conditions: { type: 'array', items: conditionResult } },
            },
          },
          split: {
            type: 'object',
            additionalProperties: false,
            required: ['bucketBy', 'totalWeight'],
            properties: {
              bucketBy: { type: 'string' },
              totalWeight: { type: 'integer' },
              bucket: { type: 'integer', description: '0 <= bucket < totalWeight; absent when the attribute is missing' },
              variant: { type: 'string' },
            },
          },
        },
      },
    },
  },
} as const;

export const playgroundAnswerSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['flags'],
  properties: {
    flags: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['key', 'reason', 'metadata', 'explanation'],
        properties: {
          key: { type: 'string' },
          value: { description: 'Absent when no variant is served (the caller default applies)' },
          variant: { type: 'string' },
          reason: { type: 'string', enum: ['STATIC', 'TARGETING_MATCH', 'SPLIT', 'DEFAULT', 'DISABLED', 'ERROR'] },
          errorCode: { type: 'string' },
          errorDetails: { type: 'string' },
          metadata: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
          explanation: explanationSchema,
        },
      },
    },
  },
} as const;
