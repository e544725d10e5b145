import { isoTimestamp } from '../http/schemas.ts';

export const apiKeyParams = {
  type: 'object',
  required: ['projectKey', 'id'],
  properties: { projectKey: { type: 'string' }, id: { type: 'string', description: "The key's id" } },
} as const;

const apiKeyProperties = {
  id: { type: 'string' },
  name: { type: 'string' },
  prefix: { type: 'string', description: 'The first characters of the token, to tell keys apart' },
  createdAt: isoTimestamp,
  revokedAt: { type: ['string', 'null'] },
} as const;

export const apiKeySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'prefix', 'createdAt', 'revokedAt'],
  properties: apiKeyProperties,
} as const;

/** The creation answer: the only time the token is shown (contract D11). */
export const createdApiKeySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'prefix', 'createdAt', 'revokedAt', 'token'],
  properties: { ...apiKeyProperties, token: { type: 'string', description: 'The secret, shown once; send it as x-api-key' } },
} as const;
