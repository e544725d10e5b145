import { flagValuesProperties } from '../flags/index.ts';
import { anyObject, isoTimestamp } from '../http/schemas.ts';
import { startReleaseBody } from '../releases/index.ts';
import { segmentValuesProperties } from '../segments/index.ts';
import { CHANGE_STATUSES } from './change.ts';

export const changeRequestParams = {
  type: 'object',
  required: ['projectKey', 'id'],
  properties: { projectKey: { type: 'string' }, id: { type: 'string', maxLength: 100 } },
} as const;

const flagChanges = {
  type: 'array',
  maxItems: 100,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['slug', 'values'],
    properties: {
      slug: { type: 'string', minLength: 1, maxLength: 150, description: "A flag's slug, changed in the request's environment" },
      values: { type: 'object', additionalProperties: false, properties: flagValuesProperties, description: 'As PATCH of the flag: absent keeps, null clears' },
    },
  },
} as const;

const segmentChanges = {
  type: 'array',
  maxItems: 100,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['key', 'values'],
    properties: {
      key: { type: 'string', minLength: 1, maxLength: 100, description: "A segment's key (created when the project has none with it)" },
      values: { type: 'object', additionalProperties: false, properties: segmentValuesProperties },
    },
  },
} as const;

const releaseStarts = {
  type: 'array',
  maxItems: 20,
  description: "Releases to start in the request's environment when it is applied (issue 33); the plan, its template's parts filled in, is what is approved",
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['slug', 'plan'],
    properties: {
      slug: { type: 'string', minLength: 1, maxLength: 150, description: "A flag's slug in the request's environment" },
      plan: { ...startReleaseBody, description: 'As the body of POST .../flags/{slug}/releases' },
    },
  },
} as const;

const title = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } as const;
const description = { type: 'string', maxLength: 5000 } as const;

export const createChangeRequestBody = {
  type: 'object',
  additionalProperties: false,
  required: ['environment', 'title'],
  properties: {
    environment: { type: 'string', minLength: 1, maxLength: 100, description: 'The key of the environment whose flags change' },
    title,
    description,
    flags: flagChanges,
    segments: segmentChanges,
    releases: releaseStarts,
    submit: { type: 'boolean', description: 'Submit for review at once (default: a draft)' },
  },
} as const;

export const editChangeRequestBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    title,
    description,
    flags: { ...flagChanges, description: 'Replaces the flag changes (absent: kept)' },
    segments: { ...segmentChanges, description: 'Replaces the segment changes (absent: kept)' },
    releases: { ...releaseStarts, description: 'Replaces the releases to start (absent: kept)' },
  },
} as const;

export const commentBody = {
  type: 'object',
  additionalProperties: false,
  required: ['body'],
  properties: { body: { type: 'string', minLength: 1, maxLength: 5000, pattern: '\\S' } },
} as const;

/** An approval names the revision the reviewer saw (issue 29 item 4). */
export const approveBody = {
  type: 'object',
  additionalProperties: false,
  required: ['revision'],
  properties: {
    revision: {
      type: 'integer',
      minimum: 1,
      description: 'The revision approved (the `revision` of the request as the reviewer read it); 409 when the request has another',
    },
  },
} as const;

export const scheduleBody = {
  type: 'object',
  additionalProperties: false,
  required: ['at'],
  properties: { at: { type: 'string', format: 'date-time', description: 'When to apply it (ISO-8601, in the future)' } },
} as const;

export const listChangeRequestsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: {
      type: 'string',
      maxLength: 200,
      pattern:
        '^(open|all|(draft|in_review|approved|scheduled|applied|rejected|cancelled)(,(draft|in_review|approved|scheduled|applied|rejected|cancelled))*)$',
      description: '`open` (default: draft, in_review, approved, scheduled), `all`, or statuses separated by commas',
    },
    limit: { type: 'string', pattern: '^[0-9]{1,3}$', description: 'At most this many, newest first (default 100, at most 500)' },
  },
} as const;

const environmentRef = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'name'],
  properties: { key: { type: 'string' }, name: { type: 'string' } },
} as const;

const summaryProperties = {
  id: { type: 'string' },
  environment: environmentRef,
  title: { type: 'string' },
  description: { type: 'string' },
  status: { type: 'string', enum: CHANGE_STATUSES },
  author: { type: 'string' },
  revision: { type: 'integer' },
  scheduledAt: { type: ['string', 'null'] },
  appliedAt: { type: ['string', 'null'] },
  appliedLate: { type: 'boolean', description: 'Applied after its time because no instance was running then' },
  failure: { type: ['string', 'null'], description: 'Why the last application was refused (a conflict names the flag)' },
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
} as const;
const summaryRequired = Object.keys(summaryProperties) as Array<keyof typeof summaryProperties>;

const difference = {
  type: 'object',
  additionalProperties: false,
  required: ['field', 'from', 'to'],
  properties: { field: { type: 'string' }, from: {}, to: {} },
} as const;

export const changeRequestSummarySchema = {
  type: 'object',
  additionalProperties: false,
  required: [...summaryRequired, 'approvals', 'changes'],
  properties: {
    ...summaryProperties,
    approvals: { type: 'integer' },
    changes: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['kind', 'key'],
        properties: { kind: { type: 'string', enum: ['flag', 'segment', 'release'] }, key: { type: 'string' } },
      },
    },
  },
} as const;

export const changeRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...summaryRequired, 'requiredApprovals', 'approvals', 'revisions', 'cannotApprove', 'changes', 'comments'],
  properties: {
    ...summaryProperties,
    requiredApprovals: { type: 'integer', description: 'Approvals its environment needs now (0 when not protected)' },
    approvals: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['userId', 'label', 'at'],
        properties: {
          userId: { type: 'string' },
          label: { type: 'string', description: "The member's e-mail address ('a member' for viewers)" },
          at: isoTimestamp,
        },
      },
    },
    revisions: {
      type: 'array',
      description: 'Who wrote each revision of the changes, oldest first; nobody who wrote one since the approvals were last reset may approve',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['revision', 'author', 'approvalsReset'],
        properties: {
          revision: { type: 'integer' },
          author: { type: 'string', description: "An e-mail address or a token's name (for viewers, what kind of actor)" },
          approvalsReset: { type: 'boolean', description: 'Writing it cleared the approvals there were' },
        },
      },
    },
    cannotApprove: {
      type: 'array',
      items: { type: 'string' },
      description: 'Member ids that may not approve the current revision: its author and whoever wrote a revision since the approvals were last reset',
    },
    changes: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['kind', 'key', 'baseVersion', 'currentVersion', 'config', 'differencesOf', 'differences', 'conflict'],
        properties: {
          kind: { type: 'string', enum: ['flag', 'segment', 'release'], description: 'release: a release to start, `key` its flag, `config` its plan' },
          key: { type: 'string' },
          baseVersion: { type: ['integer', 'null'], description: 'The version the change is based on (null: a new segment)' },
          currentVersion: { type: ['integer', 'null'] },
          config: { ...anyObject, description: 'The whole configuration after the change' },
          differencesOf: {
            type: 'string',
            enum: ['now', 'applied', 'unknown'],
            description:
              'What `differences` compare with: the configuration now (not applied yet), the one it replaced when applied, or unknown (applied before Flagpost kept it)',
          },
          differences: { type: 'array', items: difference, description: 'Against the configuration `differencesOf` names' },
          conflict: { type: 'boolean', description: 'Written since the change was based on it: applying is refused' },
        },
      },
    },
    comments: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'author', 'body', 'at'],
        properties: { id: { type: 'string' }, author: { type: 'string' }, body: { type: 'string' }, at: isoTimestamp },
      },
    },
  },
} as const;

export const compareQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to'],
  properties: {
    from: { type: 'string', maxLength: 100, description: 'An environment key' },
    to: { type: 'string', maxLength: 100, description: 'An environment key' },
  },
} as const;

export const comparisonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['flags'],
  properties: {
    flags: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['slug', 'status', 'missingIn', 'differences', 'segments'],
        properties: {
          slug: { type: 'string' },
          status: { type: 'string', enum: ['identical', 'different', 'missing'] },
          missingIn: { type: ['string', 'null'], enum: ['from', 'to', null] },
          differences: { type: 'array', items: difference },
          segments: {
            type: 'object',
            additionalProperties: false,
            required: ['from', 'to'],
            properties: { from: { type: 'array', items: { type: 'string' } }, to: { type: 'array', items: { type: 'string' } } },
          },
        },
      },
    },
  },
} as const;

export const promoteBody = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to', 'flags'],
  properties: {
    from: { type: 'string', minLength: 1, maxLength: 100 },
    to: { type: 'string', minLength: 1, maxLength: 100 },
    flags: { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 150 } },
    title,
  },
} as const;

export const revertBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 2,
  properties: {
    auditId: { type: 'string', minLength: 1, maxLength: 100, description: 'Undo this audit entry (a change of the flag in this environment)' },
    since: { type: 'string', format: 'date-time', description: 'Restore the configuration the flag had at this time' },
    title,
  },
} as const;

export const changeOutcomeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['applied', 'changeRequest'],
  properties: {
    applied: { type: 'array', items: { type: 'string' }, description: 'Flags changed at once (the environment is not protected)' },
    changeRequest: { oneOf: [{ type: 'null' }, changeRequestSchema], description: 'The submitted change request, when the environment is protected' },
  },
} as const;
