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
  required: ['key', 'name', 'createdAt', 'protected', 'requiredApprovals'],
  properties: {
    key: { type: 'string', description: 'x-environment-key of its clients' },
    name: { type: 'string' },
    createdAt: isoTimestamp,
    protected: { type: 'boolean', description: 'Direct writes are refused (409); changes go through change requests' },
    requiredApprovals: { type: 'integer', minimum: 1, description: 'Approvals a change request needs while the environment is protected' },
  },
} as const;

export const updateEnvironmentBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' },
    protected: { type: 'boolean', description: 'Owners only' },
    requiredApprovals: { type: 'integer', minimum: 1, maximum: 10, description: 'Owners only' },
  },
} as const;

export const projectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'name', 'createdAt', 'environments'],
  properties: { key: { type: 'string' }, name: { type: 'string' }, createdAt: isoTimestamp, environments: { type: 'array', items: environmentSchema } },
} as const;
