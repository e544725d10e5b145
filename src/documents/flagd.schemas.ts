// Schemas of the flagd import/export.

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
