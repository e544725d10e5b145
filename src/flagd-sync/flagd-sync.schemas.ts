// Schemas of the sync token routes (issue 21).

export const environmentParams = {
  type: 'object',
  required: ['projectKey', 'envKey'],
  properties: { projectKey: { type: 'string' }, envKey: { type: 'string', description: "The environment's key" } },
} as const;

const tokenInfoProperties = {
  configured: { type: 'boolean', description: 'Whether the environment has a sync token' },
  prefix: { type: ['string', 'null'], description: 'The first characters of the token, to tell tokens apart' },
  createdAt: { type: ['string', 'null'], format: 'date-time' },
} as const;

export const syncTokenInfoSchema = {
  type: 'object',
  required: ['configured', 'prefix', 'createdAt'],
  properties: tokenInfoProperties,
} as const;

export const createdSyncTokenSchema = {
  type: 'object',
  required: ['configured', 'prefix', 'createdAt', 'token', 'selector'],
  properties: {
    ...tokenInfoProperties,
    token: { type: 'string', description: 'The token, shown only in this answer; only its hash is kept' },
    selector: { type: 'string', description: 'What to give a flagd in-process provider as its `selector`' },
  },
} as const;
