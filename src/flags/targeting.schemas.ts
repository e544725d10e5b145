import { conditionSchema } from '../segments/index.ts';

// JSON schemas of a flag's targeting in the admin API. They check shape; the engine's validation
// (`targetingProblem`, `environmentProblem`) checks meaning and names the path of the first problem.

export const flagTypeSchema = { type: 'string', enum: ['boolean', 'string', 'number', 'object'], description: 'The same in every environment' } as const;

export const variantsSchema = {
  type: 'object',
  maxProperties: 100,
  propertyNames: { minLength: 1, maxLength: 100 },
  additionalProperties: { type: ['boolean', 'string', 'number', 'object'] },
  description: 'Named variants; every value has the flag type',
} as const;

const splitSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['weights'],
  properties: {
    bucketing: { type: 'string', enum: ['flagd-fractional-v2'], description: 'Bucketing algorithm; the current one when absent' },
    bucketBy: { type: 'string', minLength: 1, maxLength: 200, description: 'Dot path of the attribute that buckets (default: flag key + targetingKey)' },
    weights: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['variant', 'weight'],
        properties: { variant: { type: 'string' }, weight: { type: 'integer', minimum: 0 } },
      },
    },
  },
} as const;

export const ruleSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['serve'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 100, description: 'Stable id; generated when absent' },
    name: { type: 'string', maxLength: 200 },
    enabled: { type: 'boolean', description: 'A switched-off rule is kept but never matches (default true)' },
    conditions: { type: 'array', maxItems: 100, items: conditionSchema },
    segments: { type: 'array', maxItems: 100, items: { type: 'string' } },
    serve: {
      type: 'object',
      additionalProperties: false,
      description: 'Either `variant` or `split`',
      properties: { variant: { type: 'string' }, split: splitSchema },
    },
  },
} as const;

export const prerequisiteSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['flag', 'variants'],
  properties: { flag: { type: 'string' }, variants: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string' } } },
} as const;

/** Writable targeting fields of a flag in one environment. */
export const targetingValueProperties = {
  state: { type: 'string', enum: ['ENABLED', 'DISABLED'], description: "flagd's state: DISABLED serves no value at all" },
  variants: variantsSchema,
  defaultVariant: { type: ['string', 'null'], description: 'The default serve; null serves no value (the caller default applies)' },
  rules: { type: 'array', maxItems: 200, items: ruleSchema, description: 'Ordered; the first match wins' },
  prerequisites: { type: 'array', maxItems: 50, items: prerequisiteSchema },
  jsonLogic: { description: 'Imported JSON Logic not expressible as rules; null removes it' },
  metadata: {
    type: ['object', 'null'],
    maxProperties: 50,
    additionalProperties: { type: ['string', 'number', 'boolean'] },
    description: 'flagd flag metadata, returned with every evaluation; null removes it',
  },
} as const;

/** A flag's targeting in one environment, as answered. */
export const targetingAnswerProperties = {
  type: flagTypeSchema,
  state: { type: 'string', enum: ['ENABLED', 'DISABLED'] },
  variants: { type: 'object', additionalProperties: true },
  defaultVariant: { type: ['string', 'null'] },
  rules: { type: 'array', items: ruleSchema },
  prerequisites: { type: 'array', items: prerequisiteSchema },
  jsonLogic: { description: 'Imported JSON Logic, or null' },
  metadata: { type: ['object', 'null'], additionalProperties: { type: ['string', 'number', 'boolean'] } },
} as const;
