/** POST /v1/flags/code-refs, with the limits of the specification. */
export const codeRefsBody = {
  type: 'object',
  required: ['branch', 'projectName', 'references'],
  properties: {
    branch: { type: 'string', minLength: 1, maxLength: 255 },
    projectName: { type: 'string', minLength: 1, maxLength: 150 },
    repositoryUrl: { type: 'string', maxLength: 255 },
    references: {
      type: 'object',
      propertyNames: { type: 'string', minLength: 1, maxLength: 150 },
      additionalProperties: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          required: ['filePath', 'lineNumber', 'lineContent'],
          properties: {
            filePath: { type: 'string', minLength: 1, maxLength: 2000 },
            // Largest value of a PostgreSQL integer, so that both engines accept the same numbers.
            lineNumber: { type: 'integer', minimum: 1, maximum: 2147483647 },
            lineContent: { type: 'string', minLength: 1, maxLength: 4000 },
          },
        },
      },
    },
  },
} as const;

/** Filters of the admin listing; a repeated parameter (an array) is a 400, not a query error. */
export const codeRefsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    slug: { type: 'string', maxLength: 150 },
    branch: { type: 'string', maxLength: 255 },
    projectName: { type: 'string', maxLength: 150 },
  },
} as const;

export const codeRefsStoredSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['success', 'message'],
  properties: { success: { type: 'boolean', const: true }, message: { type: 'string' } },
} as const;

export const storedCodeRefSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['slug', 'projectName', 'branch', 'repositoryUrl', 'filePath', 'lineNumber', 'lineContent', 'updatedAt'],
  properties: {
    slug: { type: 'string' },
    projectName: { type: 'string' },
    branch: { type: 'string' },
    repositoryUrl: { type: ['string', 'null'] },
    filePath: { type: 'string' },
    lineNumber: { type: 'integer' },
    lineContent: { type: 'string' },
    updatedAt: { type: 'string' },
  },
} as const;

/** Request headers of the upload (contract D12): the key headers and a project API key. */
export const codeRefsHeaders = {
  type: 'object',
  properties: {
    'x-project-key': { type: 'string' },
    'x-environment-key': { type: 'string' },
    'x-api-key': { type: 'string', description: 'A live API key of the project' },
    'x-flagpost-scope': {
      type: 'string',
      enum: ['slugs', 'branch'],
      description:
        'slugs (default, D12): replace the rows of the slugs sent; branch: the upload is the whole (projectName, branch), slugs not sent are removed from code (ADR 0019)',
    },
  },
} as const;

/** DELETE of a branch's references: the branch is required, the projectName narrows it. */
export const deleteBranchQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['branch'],
  properties: {
    branch: { type: 'string', minLength: 1, maxLength: 255 },
    projectName: { type: 'string', minLength: 1, maxLength: 150 },
  },
} as const;

const codeRefRow = {
  type: 'object',
  additionalProperties: false,
  required: ['filePath', 'lineNumber', 'lineContent'],
  properties: { filePath: { type: 'string' }, lineNumber: { type: 'integer' }, lineContent: { type: 'string' } },
} as const;

export const removalSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['slug', 'projectName', 'branch', 'removedAt', 'referenceCount', 'lastReferences'],
  properties: {
    slug: { type: 'string' },
    projectName: { type: 'string' },
    branch: { type: 'string' },
    removedAt: { type: 'string', format: 'date-time' },
    referenceCount: { type: 'integer', description: 'How many references the scope had before they disappeared' },
    lastReferences: { type: 'array', items: codeRefRow, description: 'The references last seen (at most 20)' },
  },
} as const;

export const staleFlagsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // A string, as every query parameter here (no type coercion): checked by readDays.
    days: { type: 'string', maxLength: 10, description: 'The "unchanged" rule: no change for this many days (1 to 3650, default 30)' },
    unevaluatedDays: {
      type: 'string',
      maxLength: 10,
      description: 'The "not_evaluated" rule: no evaluation in any environment for this many days (1 to 3650, default 30)',
    },
  },
} as const;

export const staleReportSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['generatedAt', 'unchangedDays', 'unevaluatedDays', 'usageCountedSince', 'codeRefsUploaded', 'flags'],
  properties: {
    generatedAt: { type: 'string', format: 'date-time' },
    unchangedDays: { type: 'integer' },
    unevaluatedDays: { type: 'integer' },
    usageCountedSince: {
      type: ['string', 'null'],
      description: 'When this database began counting evaluations; `not_evaluated` applies only once it is unevaluatedDays in the past',
    },
    codeRefsUploaded: { type: 'boolean' },
    flags: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['slug', 'description', 'rules', 'removable', 'lastChangedAt', 'lastEvaluatedAt', 'expiredIn', 'removedFromCodeAt', 'references', 'removals'],
        properties: {
          slug: { type: 'string' },
          description: { type: 'string' },
          rules: { type: 'array', items: { type: 'string', enum: ['expired_but_referenced', 'unreferenced', 'unchanged', 'not_evaluated'] } },
          removable: {
            type: 'boolean',
            description: 'not_evaluated and unreferenced together: no client read it for unevaluatedDays and no code references it',
          },
          lastChangedAt: { type: 'string' },
          lastEvaluatedAt: { type: ['string', 'null'], description: 'The latest evaluation in any environment, null when none is kept' },
          expiredIn: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['key', 'name', 'expiredAt'],
              properties: { key: { type: 'string' }, name: { type: 'string' }, expiredAt: { type: 'string' } },
            },
          },
          removedFromCodeAt: { type: ['string', 'null'] },
          references: { type: 'array', items: storedCodeRefSchema },
          removals: { type: 'array', items: removalSchema },
        },
      },
    },
  },
} as const;
