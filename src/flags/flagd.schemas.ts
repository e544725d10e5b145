import { conditionSchema } from '../segments/index.ts';

// Schemas of the flagd import/export and of the playground.

export const environmentParams = {
  type: 'object',
  required: ['projectKey', 'envKey'],
  properties: { projectKey: { type: 'string' }, envKey: { type: 'string', description: "The environment's key" } },
} as const;

/** A flagd flag definition (https://flagd.dev/schema/v0/flags.json); the import checks it in detail. */
export const flagdDefinitionSchema = {
  type: 'object',
  additionalProperties: true,
  description: 'A flagd flag definition: {"$schema", "flags": {key: {state, variants, defaultVariant, targeting?, metadata?}}, "$evaluators"?, "metadata"?}',
  properties: {
    $schema: { type: 'string' },
    flags: { description: 'Flags by key (or, as flagd also reads, a list of flags with `key`)' },
    $evaluators: { type: 'object', additionalProperties: true, description: 'Shared JSON Logic by name; segments are exported here' },
    metadata: { type: 'object', additionalProperties: true },
  },
} as const;

export const flagdExportSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['$schema', 'flags'],
  properties: {
    $schema: { type: 'string', const: 'https://flagd.dev/schema/v0/flags.json' },
    flags: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['state', 'variants', 'defaultVariant'],
        properties: {
          state: { type: 'string', enum: ['ENABLED', 'DISABLED'] },
          variants: { type: 'object', additionalProperties: true },
          defaultVariant: { type: ['string', 'null'] },
          targeting: { description: 'JSON Logic with flagd operators' },
          metadata: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
        },
      },
    },
    $evaluators: { type: 'object', additionalProperties: true },
  },
} as const;

const keys = { type: 'array', items: { type: 'string' } } as const;

export const flagdImportResultSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['created', 'updated', 'unchanged', 'segments'],
  properties: {
    created: { ...keys, description: 'Flags new to this environment (new to the project: added to the other environments switched off)' },
    updated: { ...keys, description: 'Flags whose targeting in this environment changed' },
    unchanged: { ...keys, description: 'Flags of the file that were already as the file says' },
    segments: { ...keys, description: 'Segments created or changed (every environment of the project uses them)' },
  },
} as const;

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
