import { conditionSchema, SEGMENT_KEY_MAX_LENGTH, SEGMENT_KEY_PATTERN } from '../segments/index.ts';
import { documentFormSchema } from '../forms/index.ts';
import { flagTypeSchema, prerequisiteSchema, ruleSchema, SLUG_MAX_LENGTH, SLUG_PATTERN, targetingValueProperties, variantsSchema } from '../flags/index.ts';

// Schemas of flags as code (issue 21): a project as one document (project-document.ts). They check
// shape; the service checks meaning with the targeting engine and names the path of the first problem.

const environmentName = { type: 'string', minLength: 1, maxLength: 100 } as const;

const documentFlagEnvironment = {
  type: 'object',
  additionalProperties: false,
  required: ['variants', 'defaultVariant'],
  properties: {
    state: { type: 'string', enum: ['ENABLED', 'DISABLED'], description: 'ENABLED when absent' },
    variants: variantsSchema,
    defaultVariant: { type: ['string', 'null'] },
    rules: { type: 'array', maxItems: 200, items: ruleSchema },
    prerequisites: { type: 'array', maxItems: 50, items: prerequisiteSchema },
    jsonLogic: { description: 'Imported JSON Logic not expressible as rules' },
    metadata: { ...targetingValueProperties.metadata, type: 'object' },
    description: { type: 'string', maxLength: 2000 },
    payload: { type: 'object', additionalProperties: true },
    expiredAt: { type: 'string', format: 'date-time' },
    preview: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'content'],
      description: 'Present for a preview flag',
      properties: { name: { type: ['string', 'null'], maxLength: 200 }, content: { type: ['object', 'null'], additionalProperties: true } },
    },
  },
} as const;

export const projectDocumentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'project', 'environments', 'segments', 'flags'],
  description: 'A project as code: environments by name, segments by key, flags by slug with their configuration per environment',
  properties: {
    version: { type: 'integer', const: 1 },
    project: { type: 'string', minLength: 1, maxLength: 200, description: "The project's name" },
    environments: { type: 'array', maxItems: 100, items: environmentName, description: 'Environment names, in order' },
    segments: {
      type: 'object',
      maxProperties: 1000,
      propertyNames: { minLength: 1, maxLength: SEGMENT_KEY_MAX_LENGTH, pattern: SEGMENT_KEY_PATTERN },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'match', 'conditions'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          description: { type: 'string', maxLength: 2000 },
          match: { type: 'string', enum: ['all', 'any'] },
          conditions: { type: 'array', minItems: 1, maxItems: 50, items: conditionSchema },
        },
      },
    },
    flags: {
      type: 'object',
      maxProperties: 10000,
      propertyNames: { minLength: 1, maxLength: SLUG_MAX_LENGTH, pattern: SLUG_PATTERN },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'environments'],
        properties: {
          type: flagTypeSchema,
          environments: { type: 'object', maxProperties: 100, additionalProperties: documentFlagEnvironment },
        },
      },
    },
    forms: {
      type: 'object',
      maxProperties: 1000,
      description:
        "The project's forms by key (issue 34): their settings, defaults left out; secrets as $NAME references. Absent: forms are left alone; forms of the project not named are kept",
      propertyNames: { minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]{1,64}$' },
      additionalProperties: documentFormSchema,
    },
  },
} as const;

export const applyDocumentBody = {
  type: 'object',
  additionalProperties: false,
  required: ['document'],
  properties: {
    document: projectDocumentSchema,
    projectKey: { type: 'string', description: 'The project to change; without it, the project named in the document (created when there is none)' },
    dryRun: { type: 'boolean', description: 'Only answer the plan; change nothing (default false)' },
    source: {
      type: 'string',
      minLength: 1,
      maxLength: 120,
      description: 'What to call the document in the titles of the change requests it opens ("Apply <source> to <environment>"; default: the project name)',
    },
  },
} as const;

const planStepSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['action', 'kind', 'key'],
  properties: {
    action: { type: 'string', enum: ['create', 'update', 'delete', 'keep'] },
    kind: { type: 'string', enum: ['project', 'environment', 'segment', 'flag', 'form'] },
    key: { type: 'string', description: 'Project or environment name, segment key, flag slug, form key' },
    environment: { type: 'string', description: 'The environment of a flag update' },
    fields: { type: 'array', items: { type: 'string' }, description: 'What an update changes' },
    note: { type: 'string' },
  },
} as const;

/** A protected environment's change request as an apply leaves it (in a dry run: would leave it). */
export const proposedChangeRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['environment', 'environmentKey', 'title', 'outcome', 'changes', 'id', 'path', 'dashboardPath'],
  properties: {
    environment: { type: 'string', description: 'The protected environment (its name)' },
    environmentKey: { type: 'string' },
    title: { type: 'string' },
    outcome: {
      type: 'string',
      enum: ['opened', 'updated', 'unchanged', 'left_open'],
      description:
        'opened: a new request, submitted for review. updated: the open request an earlier apply opened now proposes these changes (a new revision: its approvals are reset). unchanged: that request already proposes exactly these changes; nothing was written. left_open: the document changes nothing in this environment, but an open request an earlier apply opened is there; it is left as it is. In a dry run, what would happen',
    },
    changes: {
      type: 'array',
      items: planStepSchema,
      description:
        'What this apply proposes: flag updates in this environment (a flag the apply creates is created switched off and proposed here), and segment updates; empty when left_open',
    },
    id: { type: ['string', 'null'], description: 'The change request (null only for one a dry run would open)' },
    path: { type: ['string', 'null'], description: 'The change request in the admin API (null when id is)' },
    dashboardPath: { type: ['string', 'null'], description: 'The change request in the dashboard (null when id is)' },
  },
} as const;

export const applyResultSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['projectKey', 'dryRun', 'changes', 'changeRequests'],
  properties: {
    projectKey: { type: ['string', 'null'], description: 'The project changed (null in a dry run that would create it)' },
    dryRun: { type: 'boolean' },
    changes: {
      type: 'array',
      items: planStepSchema,
      description: 'What the apply writes, in the order it is (or would be) applied; empty when the project matches',
    },
    changeRequests: {
      type: 'array',
      items: proposedChangeRequestSchema,
      description:
        'One per protected environment the document changes (its changes wait there for review instead of being written), in the order of the environments; also one per protected environment the document does not change where an open request of an earlier apply is left (left_open)',
    },
  },
} as const;

/** The document as answered: the same shape, every part open (the request schema is the strict one). */
export const projectDocumentAnswer = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'project', 'environments', 'segments', 'flags'],
  properties: {
    version: { type: 'integer' },
    project: { type: 'string' },
    environments: { type: 'array', items: { type: 'string' } },
    segments: { type: 'object', additionalProperties: true },
    flags: { type: 'object', additionalProperties: true },
    forms: { type: 'object', additionalProperties: true, description: "The project's forms by key, when it has any (secrets as $NAME references)" },
  },
} as const;
