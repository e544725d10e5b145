import { isoTimestamp } from '../http/schemas.ts';

// The JSON schemas of the metrics' and experiments' admin routes (issue 32).

/** Keys of metrics and experiments: letters, digits, `.`, `_` and `-`, as flag slugs in ASCII. */
const keyPattern = '^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$';
const key = { type: 'string', pattern: keyPattern, maxLength: 100 } as const;
const name = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } as const;
const eventName = { type: 'string', minLength: 1, maxLength: 256, description: 'A tracked event name (POST /v1/track kind track)' } as const;
const metricType = { type: 'string', enum: ['proportion', 'mean', 'ratio'] } as const;
const direction = { type: 'string', enum: ['increase', 'decrease'], description: 'Which way is better' } as const;
const windowHours = { type: 'integer', minimum: 1, maximum: 8760, description: "Hours after a user's first exposure that count (default 72)" } as const;
const metricKeys = { type: 'array', maxItems: 20, uniqueItems: true, items: key } as const;

export const metricParams = {
  type: 'object',
  required: ['projectKey', 'metricKey'],
  properties: { projectKey: { type: 'string' }, metricKey: { type: 'string' } },
} as const;

export const createMetricBody = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'name', 'event', 'type', 'direction'],
  properties: {
    key,
    name,
    event: eventName,
    type: metricType,
    denominatorEvent: { ...eventName, description: 'The denominator of a ratio metric (ratio only)' },
    direction,
    windowHours,
  },
} as const;

export const updateMetricBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name,
    event: eventName,
    type: metricType,
    denominatorEvent: { type: ['string', 'null'], minLength: 1, maxLength: 256 },
    direction,
    windowHours,
  },
} as const;

export const metricSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'name', 'event', 'type', 'denominatorEvent', 'direction', 'windowHours', 'createdAt', 'updatedAt'],
  properties: {
    key: { type: 'string' },
    name: { type: 'string' },
    event: { type: 'string' },
    type: metricType,
    denominatorEvent: { type: ['string', 'null'] },
    direction,
    windowHours: { type: 'integer' },
    createdAt: isoTimestamp,
    updatedAt: isoTimestamp,
  },
} as const;

export const experimentListParams = {
  type: 'object',
  required: ['projectKey', 'envKey'],
  properties: { projectKey: { type: 'string' }, envKey: { type: 'string' } },
} as const;

export const experimentParams = {
  type: 'object',
  required: ['projectKey', 'envKey', 'experimentKey'],
  properties: { projectKey: { type: 'string' }, envKey: { type: 'string' }, experimentKey: { type: 'string' } },
} as const;

export const createExperimentBody = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'name', 'flagKey', 'controlVariant', 'metrics'],
  properties: {
    key,
    name,
    flagKey: { type: 'string', minLength: 1, maxLength: 150 },
    ruleId: { type: 'string', minLength: 1, description: "The rule whose split is measured; absent: the flag's only split rule" },
    controlVariant: { type: 'string', minLength: 1 },
    metrics: { ...metricKeys, minItems: 1, description: "Goal metrics' keys" },
    guardrails: { ...metricKeys, description: "Guardrail metrics' keys" },
    hypothesis: { type: 'string', maxLength: 2000 },
  },
} as const;

export const updateExperimentBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name,
    flagKey: { type: 'string', minLength: 1, maxLength: 150 },
    ruleId: { type: ['string', 'null'], minLength: 1 },
    controlVariant: { type: 'string', minLength: 1 },
    metrics: { ...metricKeys, minItems: 1 },
    guardrails: metricKeys,
    hypothesis: { type: ['string', 'null'], maxLength: 2000 },
  },
} as const;

const weights = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['variant', 'weight'],
    properties: { variant: { type: 'string' }, weight: { type: 'number' } },
  },
} as const;

export const experimentSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'key',
    'name',
    'flagKey',
    'ruleId',
    'controlVariant',
    'metrics',
    'guardrails',
    'hypothesis',
    'status',
    'split',
    'startedAt',
    'stoppedAt',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    key: { type: 'string' },
    name: { type: 'string' },
    flagKey: { type: 'string' },
    ruleId: { type: ['string', 'null'] },
    controlVariant: { type: 'string' },
    metrics: { type: 'array', items: { type: 'string' } },
    guardrails: { type: 'array', items: { type: 'string' } },
    hypothesis: { type: ['string', 'null'] },
    status: { type: 'string', enum: ['draft', 'running', 'stopped'] },
    split: {
      type: ['object', 'null'],
      description: 'The split measured, as it was at the start (null before)',
      additionalProperties: false,
      required: ['ruleId', 'weights'],
      properties: { ruleId: { type: 'string' }, weights },
    },
    startedAt: { type: ['string', 'null'] },
    stoppedAt: { type: ['string', 'null'] },
    createdAt: isoTimestamp,
    updatedAt: isoTimestamp,
  },
} as const;

const interval = { type: ['array', 'null'], items: { type: 'number' }, minItems: 2, maxItems: 2 } as const;
const nullableNumber = { type: ['number', 'null'] } as const;

export const resultsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['experiment', 'status', 'startedAt', 'multipleExposures', 'users', 'srm', 'metrics'],
  properties: {
    experiment: { type: 'string' },
    status: { type: 'string', enum: ['running', 'stopped'] },
    startedAt: isoTimestamp,
    multipleExposures: { type: 'integer', description: 'Users exposed to more than one variant: counted in the variant of their first exposure only' },
    users: { type: 'object', additionalProperties: { type: 'integer' }, description: 'Users per variant' },
    srm: {
      type: 'object',
      additionalProperties: false,
      required: ['pValue', 'mismatch'],
      description: "Sample-ratio check: chi-squared of the users against the split's weights; mismatch at p < 0.001",
      properties: { pValue: { type: 'number' }, mismatch: { type: 'boolean' } },
    },
    metrics: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['metric', 'type', 'guardrail', 'variants', 'comparisons'],
        properties: {
          metric: { type: 'string' },
          type: metricType,
          guardrail: { type: 'boolean' },
          variants: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['variant', 'users', 'mean', 'stddev'],
              properties: { variant: { type: 'string' }, users: { type: 'integer' }, mean: { type: 'number' }, stddev: { type: 'number' } },
            },
          },
          comparisons: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['variant', 'baseline', 'relativeLift', 'ci95', 'pValue', 'chanceToWin', 'sequentialCi95', 'significant'],
              properties: {
                variant: { type: 'string' },
                baseline: { type: 'string' },
                relativeLift: nullableNumber,
                ci95: interval,
                pValue: nullableNumber,
                chanceToWin: nullableNumber,
                sequentialCi95: interval,
                significant: { type: 'boolean', description: 'ci95 excludes zero' },
              },
            },
          },
        },
      },
    },
  },
} as const;
