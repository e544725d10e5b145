// Schemas of the Unleash import (issue 21). The export itself is read in detail by unleash-format.ts,
// which names the JSON pointer of the first problem.

import { proposedChangeRequestSchema } from './project-document.schemas.ts';

export const unleashImportBody = {
  type: 'object',
  additionalProperties: false,
  required: ['export'],
  properties: {
    export: {
      type: 'object',
      additionalProperties: true,
      description:
        'An Unleash admin export ({features, featureStrategies, featureEnvironments, segments, dependencies}) or a client API state ({version, features, segments})',
    },
    projectKey: { type: 'string', description: 'Import into this project (its other flags are kept); without it, into a new project' },
    projectName: { type: 'string', minLength: 1, maxLength: 200, description: 'The name of a new project (default "Unleash import")' },
    environment: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'The environment of a client state or of an export that names none (default "production")',
    },
    dryRun: { type: 'boolean', description: 'Only answer what would change; write nothing' },
  },
} as const;

export const unleashImportResultSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['projectKey', 'dryRun', 'changes', 'changeRequests', 'notCarried'],
  properties: {
    projectKey: { type: ['string', 'null'], description: 'The project written (null in a dry run into a new project)' },
    dryRun: { type: 'boolean' },
    changes: { type: 'array', items: { type: 'object', additionalProperties: true }, description: 'As POST /admin/v1/documents/apply answers them' },
    changeRequests: {
      type: 'array',
      items: proposedChangeRequestSchema,
      description:
        'Into an existing project: the change requests of its protected environments (opened, updated, kept or left open), as POST /admin/v1/documents/apply answers them',
    },
    notCarried: {
      type: 'array',
      description: 'What Flagpost could not carry over, and why; nothing is dropped silently',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['item', 'reason'],
        properties: { feature: { type: 'string' }, environment: { type: 'string' }, item: { type: 'string' }, reason: { type: 'string' } },
      },
    },
  },
} as const;
