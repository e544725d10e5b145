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
  },
} as const;
