import { isoTimestamp } from '../http/schemas.ts';

// The JSON schemas of the releases' admin routes (issue 33).

const keyPattern = '^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$';
const key = { type: 'string', pattern: keyPattern, maxLength: 100 } as const;
const variantKey = { type: 'string', minLength: 1, maxLength: 256 } as const;

const step = {
  type: 'object',
  additionalProperties: false,
  required: ['percent'],
  properties: {
    percent: { type: 'integer', minimum: 1, maximum: 100, description: 'Share of users served the variant during the step' },
    holdSeconds: { type: 'integer', minimum: 0, maximum: 31_536_000, description: 'The least time the step runs' },
    approval: { type: 'boolean', description: 'The step waits for an approval before it starts' },
  },
} as const;

const metricGuardrail = {
  type: 'object',
  additionalProperties: false,
  required: ['metric'],
  properties: {
    metric: { ...key, description: "A metric of the project's experiments" },
    minUsers: { type: 'integer', minimum: 1, maximum: 100_000_000, description: 'Users each arm needs before it may decide (default 100)' },
  },
} as const;

const prometheusGuardrail = {
  type: 'object',
  additionalProperties: false,
  required: ['prometheus'],
  properties: {
    prometheus: {
      type: 'object',
      additionalProperties: false,
      required: ['url', 'query'],
      properties: {
        url: {
          type: 'string',
          minLength: 1,
          maxLength: 2000,
          format: 'uri',
          description: 'The base URL of a Prometheus-compatible API (…/api/v1/query is added)',
        },
        query: { type: 'string', minLength: 1, maxLength: 4000 },
        above: { type: 'number' },
        below: { type: 'number' },
        forSeconds: { type: 'integer', minimum: 0, maximum: 86_400 },
      },
    },
  },
} as const;

const guardrail = { oneOf: [metricGuardrail, prometheusGuardrail] } as const;
const steps = { type: 'array', minItems: 1, maxItems: 20, items: step } as const;
const guardrails = { type: 'array', maxItems: 10, items: guardrail } as const;

export const releaseListParams = {
  type: 'object',
  required: ['projectKey', 'envKey', 'slug'],
  properties: { projectKey: { type: 'string' }, envKey: { type: 'string' }, slug: { type: 'string' } },
} as const;

export const releaseParams = {
  type: 'object',
  required: ['projectKey', 'envKey', 'slug', 'releaseId'],
  properties: { projectKey: { type: 'string' }, envKey: { type: 'string' }, slug: { type: 'string' }, releaseId: { type: 'string' } },
} as const;

export const startReleaseBody = {
  type: 'object',
  additionalProperties: false,
  required: ['variant', 'baseline'],
  properties: { variant: variantKey, baseline: variantKey, steps, guardrails, template: key },
} as const;

const stepView = {
  type: 'object',
  additionalProperties: false,
  required: ['percent', 'startedAt', 'completedAt'],
  properties: {
    ...step.properties,
    startedAt: { type: ['string', 'null'] },
    completedAt: { type: ['string', 'null'] },
    holdEndsAt: { type: ['string', 'null'], description: 'When the hold of a started step ends; paused time does not count' },
    approvedBy: { type: ['string', 'null'] },
  },
} as const;

const numberPair = { type: ['array', 'null'], items: { type: 'number' }, minItems: 2, maxItems: 2 } as const;

const guardrailView = {
  type: 'object',
  required: ['state'],
  properties: {
    metric: { type: 'string' },
    minUsers: { type: 'integer' },
    prometheus: prometheusGuardrail.properties.prometheus,
    state: { type: 'string', enum: ['healthy', 'collecting', 'breached', 'unknown'] },
    reason: { type: 'string' },
    users: { type: 'object', additionalProperties: { type: 'integer' } },
    means: { type: 'object', additionalProperties: { type: 'number' } },
    lift: { type: ['number', 'null'] },
    ci95: numberPair,
    sequentialCi95: numberPair,
    pValue: { type: ['number', 'null'] },
    value: { type: ['number', 'null'] },
    checkedAt: { type: 'string' },
  },
} as const;

export const releaseSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'flag', 'status', 'variant', 'baseline', 'currentStep', 'percent', 'steps', 'guardrails', 'createdBy', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string' },
    flag: { type: 'string' },
    status: { type: 'string', enum: ['running', 'waiting_approval', 'paused', 'completed', 'rolled_back', 'cancelled'] },
    variant: { type: 'string' },
    baseline: { type: 'string' },
    currentStep: { type: 'integer' },
    percent: { type: 'integer', description: 'Share of users served the variant now' },
    waitingFor: { type: 'string', enum: ['time', 'approval', 'users', 'guardrail'] },
    steps: { type: 'array', items: stepView },
    guardrails: { type: 'array', items: guardrailView },
    template: { type: ['string', 'null'] },
    rolledBackReason: { type: 'string' },
    createdBy: { type: 'string' },
    createdAt: isoTimestamp,
    updatedAt: isoTimestamp,
  },
} as const;

export const releaseListSchema = { type: 'object', required: ['releases'], properties: { releases: { type: 'array', items: releaseSchema } } } as const;

export const releaseReadingsSchema = {
  type: 'object',
  required: ['readings'],
  properties: {
    readings: {
      type: 'array',
      items: {
        type: 'object',
        required: ['guardrail', 'at', 'reading'],
        properties: { guardrail: { type: 'integer' }, at: isoTimestamp, reading: guardrailView },
      },
    },
  },
} as const;

export const templateParams = {
  type: 'object',
  required: ['projectKey', 'templateKey'],
  properties: { projectKey: { type: 'string' }, templateKey: { type: 'string' } },
} as const;

export const createTemplateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'name', 'steps'],
  properties: { key, name: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' }, steps, guardrails },
} as const;

export const updateTemplateBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { name: createTemplateBody.properties.name, steps, guardrails },
} as const;

export const templateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'name', 'steps', 'guardrails', 'createdAt', 'updatedAt'],
  properties: {
    key: { type: 'string' },
    name: { type: 'string' },
    steps: { type: 'array', items: step },
    guardrails: { type: 'array', items: guardrail },
    createdAt: isoTimestamp,
    updatedAt: isoTimestamp,
  },
} as const;
