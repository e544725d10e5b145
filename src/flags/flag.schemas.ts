import { MAX_TAGS, SLUG_MAX_LENGTH, SLUG_PATTERN, TAG_PATTERN } from './flag.ts';
import { flagTypeSchema, targetingAnswerProperties, targetingValueProperties, variantsSchema } from './targeting.schemas.ts';

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
    type: { ...flagTypeSchema, description: "The flag's type in every environment (default boolean, with variants on/off)" },
    variants: { ...variantsSchema, description: 'Named variants, the same in every environment to start with (required for other types than boolean)' },
    defaultVariant: { type: 'string', description: 'The default serve in every environment (default: the first variant; for boolean flags `enabled` decides)' },
  },
} as const;

export const updateFlagBody = {
  type: 'object',
  additionalProperties: false,
  properties: { ...flagValueProperties, ...targetingValueProperties },
} as const;

/** What a change request may set of a flag in its environment (issue 24): PATCH semantics, preview fields aside. */
export const flagValuesProperties = {
  enabled: flagValueProperties.enabled,
  payload: flagValueProperties.payload,
  expiredAt: flagValueProperties.expiredAt,
  description: flagValueProperties.description,
  ...targetingValueProperties,
} as const;

export const flagParams = {
  type: 'object',
  required: ['projectKey', 'slug'],
  properties: { projectKey: { type: 'string' }, slug: { type: 'string' } },
} as const;

export const environmentFlagParams = {
  type: 'object',
  required: ['projectKey', 'envKey', 'slug'],
  properties: { projectKey: { type: 'string' }, envKey: { type: 'string', description: "The environment's key" }, slug: { type: 'string' } },
} as const;

/** The admin API's view of a flag in one environment. */
export const adminFlagSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'slug',
    'environment',
    'key',
    'name',
    'enabled',
    'payload',
    'expiredAt',
    'description',
    'isPreview',
    'previewName',
    'previewContent',
    'createdAt',
    'updatedAt',
    'type',
    'state',
    'variants',
    'defaultVariant',
    'rules',
    'prerequisites',
    'jsonLogic',
    'metadata',
    'version',
    'flagd',
    'lastEvaluatedAt',
  ],
  properties: {
    slug: { type: 'string' },
    environment: { type: 'object', additionalProperties: false, required: ['key', 'name'], properties: { key: { type: 'string' }, name: { type: 'string' } } },
    key: { type: 'string', description: "The environment's key (as in Basestack's admin answers)" },
    name: { type: 'string', description: "The environment's name" },
    enabled: { type: 'boolean' },
    payload: { type: ['object', 'null'], additionalProperties: true },
    expiredAt: { type: ['string', 'null'] },
    description: { type: 'string' },
    isPreview: { type: 'boolean' },
    previewName: { type: ['string', 'null'] },
    previewContent: { description: 'TipTap JSON document (contract D9), or null' },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    ...targetingAnswerProperties,
    version: { type: 'integer', description: 'Incremented by every write of the flag in this environment; change requests are based on one' },
    flagd: {
      type: 'object',
      additionalProperties: false,
      required: ['portable', 'note'],
      description: "Whether flagd evaluates this flag's export (GET .../flagd) exactly as Flagpost does, and if not, why",
      properties: { portable: { type: 'boolean' }, note: { type: ['string', 'null'] } },
    },
    lastEvaluatedAt: {
      type: ['string', 'null'],
      description:
        'The latest evaluation Flagpost answered for this flag in this environment (to within the usage flush interval), or null when none is kept (FLAGPOST_USAGE_RETENTION_DAYS)',
    },
  },
} as const;

/** A flag with its value in every environment of the project. */
export const flagAcrossEnvironmentsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['slug', 'environments'],
  properties: {
    slug: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' }, description: 'Tags of the flag, the same in every environment' },
    archivedAt: { type: ['string', 'null'], description: 'When the flag was archived, or null' },
    environments: { type: 'array', items: adminFlagSchema },
  },
} as const;

/** A new flag, with the change request opened in each protected environment for what it asked for there. */
export const createdFlagSchema = {
  ...flagAcrossEnvironmentsSchema,
  required: [...flagAcrossEnvironmentsSchema.required, 'changeRequests'],
  properties: {
    ...flagAcrossEnvironmentsSchema.properties,
    changeRequests: {
      type: 'array',
      description:
        'One per protected environment where the flag asked for more than switched off: it starts switched off there, and this change request (submitted for review) holds what was asked',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'environment'],
        properties: {
          id: { type: 'string' },
          environment: {
            type: 'object',
            additionalProperties: false,
            required: ['key', 'name'],
            properties: { key: { type: 'string' }, name: { type: 'string' } },
          },
        },
      },
    },
  },
} as const;

/** PATCH /projects/{projectKey}/flags/{slug}: what the flag shares across environments. */
export const updateFlagAcrossEnvironmentsBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    slug: {
      type: 'string',
      minLength: 1,
      maxLength: SLUG_MAX_LENGTH,
      pattern: SLUG_PATTERN,
      description: 'A new slug (a rename; the old one answers 404 from then on)',
    },
    tags: {
      type: 'array',
      maxItems: MAX_TAGS,
      items: { type: 'string', minLength: 1, maxLength: 40, pattern: TAG_PATTERN },
      description: "The flag's tags, replacing the ones it has: lower-case letters, digits, . _ -",
    },
    archived: { type: 'boolean', description: 'Archive (true) or restore (false); an archived flag is still served' },
  },
} as const;

/** Request headers of the flag interface (contract D4); missing or empty ones answer 400. */
export const keyHeaders = {
  type: 'object',
  properties: {
    'x-project-key': { type: 'string', description: "The project's key" },
    'x-environment-key': { type: 'string', description: "The environment's key" },
  },
} as const;

const publicFlagProperties = {
  slug: { type: 'string' },
  enabled: { type: 'boolean' },
  payload: { type: ['object', 'null'], additionalProperties: true },
  expiredAt: { type: ['string', 'null'] },
  description: { type: 'string' },
} as const;

/** GET /v1/flags/{slug} (interface.md "Flag"). */
export const publicFlagSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['slug', 'enabled', 'payload', 'expiredAt', 'description'],
  properties: publicFlagProperties,
} as const;

/** The single-flag 404: `enabled: false`, so that clients treat an unknown flag as off (contract D5). */
export const flagNotFoundSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['enabled', 'error', 'message'],
  properties: { enabled: { type: 'boolean', const: false }, error: { type: 'boolean', const: true }, message: { type: 'string' } },
} as const;

export const flagListSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['flags'],
  properties: {
    flags: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['slug', 'enabled', 'payload', 'expiredAt', 'description', 'createdAt', 'updatedAt'],
        properties: { ...publicFlagProperties, createdAt: { type: 'string' }, updatedAt: { type: 'string' } },
      },
    },
  },
} as const;

export const previewListSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['flags'],
  properties: {
    flags: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['slug', 'enabled', 'isPreview', 'previewName', 'previewContent', 'expiredAt', 'createdAt'],
        properties: {
          slug: { type: 'string' },
          enabled: { type: 'boolean' },
          isPreview: { type: 'boolean', const: true },
          previewName: { type: ['string', 'null'] },
          previewContent: { type: 'string', description: 'The preview content rendered to safe HTML' },
          expiredAt: { type: ['string', 'null'] },
          createdAt: { type: 'string' },
        },
      },
    },
  },
} as const;

/** 304 Not Modified: the If-None-Match matched the ETag; no body. */
export const notModified = { description: 'Not Modified: If-None-Match matched the ETag' } as const;
