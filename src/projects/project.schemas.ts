import { isoTimestamp } from '../http/schemas.ts';

export const nameBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' } },
} as const;

export const projectParams = {
  type: 'object',
  required: ['projectKey'],
  properties: { projectKey: { type: 'string', description: "The project's key (x-project-key of its clients)" } },
} as const;

export const environmentParams = {
  type: 'object',
  required: ['projectKey', 'envKey'],
  properties: { projectKey: { type: 'string', description: "The project's key" }, envKey: { type: 'string', description: "The environment's key" } },
} as const;

export const environmentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'name', 'createdAt'],
  properties: { key: { type: 'string', description: 'x-environment-key of its clients' }, name: { type: 'string' }, createdAt: isoTimestamp },
} as const;

export const projectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'name', 'createdAt', 'environments'],
  properties: { key: { type: 'string' }, name: { type: 'string' }, createdAt: isoTimestamp, environments: { type: 'array', items: environmentSchema } },
} as const;
