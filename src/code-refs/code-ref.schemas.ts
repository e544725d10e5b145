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
