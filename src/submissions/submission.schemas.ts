import { spamChecksSchema } from '../forms/index.ts';
import { isoTimestamp, nextCursor } from '../http/schemas.ts';

export const formKeyParams = {
  type: 'object',
  required: ['formKey'],
  properties: { formKey: { type: 'string', description: "The form's key" } },
} as const;

export const submissionParams = {
  type: 'object',
  required: ['formKey', 'id'],
  properties: { formKey: { type: 'string' }, id: { type: 'string', description: "The submission's id" } },
} as const;

export const fileParams = {
  type: 'object',
  required: ['formKey', 'id', 'fileId'],
  properties: { formKey: { type: 'string' }, id: { type: 'string' }, fileId: { type: 'string' } },
} as const;

/** Querystring of the admin listing and export of a form's submissions. */
export const submissionListQuery = {
  type: 'object',
  properties: {
    cursor: { type: 'string' },
    limit: { type: 'string' },
    spam: { type: 'string', enum: ['true', 'false', 'all'] },
    spamCheck: {
      type: 'string',
      enum: ['honeypot', 'duplicate', 'minFillTime', 'disposableEmail', 'rule', 'proofOfWork', 'manual'],
      description: 'Only spam that this check called spam (a `check` of its spamReasons)',
    },
    since: { type: 'string', format: 'date-time', description: 'Only submissions received at or after this time (issue 34)' },
    until: { type: 'string', format: 'date-time', description: 'Only submissions received before this time (issue 34)' },
    order: {
      type: 'string',
      enum: ['asc', 'desc'],
      description: 'desc (default): newest first; asc: oldest first. A cursor continues the order it came from.',
    },
    q: {
      type: 'string',
      maxLength: 200,
      description:
        'Full text over the field values: submissions holding every word of it, each as the start of a word (case and accents ignored; at most 8 words). Field filters are `field.<name>=<value>` parameters beside it (exact value, at most 5, all must match).',
    },
  },
} as const;

/** Field filters of the listing, at most. */
export const MAX_FIELD_FILTERS = 5;
/** The prefix of a field filter's query parameter: `field.topic=sales`. */
export const FIELD_FILTER_PREFIX = 'field.';
/** Names a field filter may name: no quotes, backslashes or control characters, 1 to 100 characters. */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
export const FIELD_FILTER_NAME = /^[^\u0000-\u001f\u007f"\\]{1,100}$/;

/** Querystring of the CSV export: which submissions to include (the time filters are the listing's alone). */
export const exportQuery = {
  type: 'object',
  properties: {
    cursor: submissionListQuery.properties.cursor,
    limit: submissionListQuery.properties.limit,
    spam: submissionListQuery.properties.spam,
    spamCheck: submissionListQuery.properties.spamCheck,
  },
} as const;

const fileSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'field', 'name', 'size', 'contentType'],
  properties: { id: { type: 'string' }, field: { type: 'string' }, name: { type: 'string' }, size: { type: 'integer' }, contentType: { type: 'string' } },
} as const;

const submissionProperties = {
  id: { type: 'string' },
  data: { type: 'object', additionalProperties: true, description: 'Field name to value; a repeated name holds every value in a list' },
  files: { type: 'array', items: fileSchema },
  spam: { type: 'boolean' },
  spamReasons: {
    type: 'array',
    description: 'Why the submission is spam: one {check, detail} per check that said so (empty when it is not spam)',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['check', 'detail'],
      properties: { check: { type: 'string' }, detail: { type: 'string' } },
    },
  },
  createdAt: isoTimestamp,
} as const;

export const submissionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'data', 'files', 'spam', 'spamReasons', 'createdAt'],
  properties: submissionProperties,
} as const;

export const submissionPageSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['submissions', 'nextCursor'],
  properties: { submissions: { type: 'array', items: submissionSchema }, nextCursor },
} as const;

const attemptSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['attempt', 'startedAt', 'durationMs', 'ok', 'statusCode', 'error'],
  properties: {
    attempt: { type: 'integer' },
    startedAt: isoTimestamp,
    durationMs: { type: 'integer' },
    ok: { type: 'boolean' },
    statusCode: { type: ['integer', 'null'] },
    error: { type: ['string', 'null'] },
  },
} as const;

export const deliverySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'kind', 'target', 'status', 'attempts', 'nextAttemptAt', 'lastError', 'deliveredAt', 'history'],
  properties: {
    id: { type: 'string', description: 'Also the webhook-id header of every attempt' },
    kind: { type: 'string', enum: ['webhook', 'email', 'slack', 'discord', 'autoresponse', 'alert'] },
    target: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempts: { type: 'integer' },
    nextAttemptAt: { type: ['string', 'null'] },
    lastError: { type: ['string', 'null'] },
    deliveredAt: { type: ['string', 'null'] },
    history: { type: 'array', items: attemptSchema },
  },
} as const;

/** The request metadata of a submission. */
const metaSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['ip', 'userAgent', 'referer', 'origin'],
  properties: {
    ip: { type: ['string', 'null'] },
    userAgent: { type: ['string', 'null'] },
    referer: { type: ['string', 'null'] },
    origin: { type: ['string', 'null'] },
    webdriver: { type: ['boolean', 'null'], description: "A Formspree client's webdriver flag (Formspree-Session-Data); recorded, never a verdict by itself" },
  },
} as const;

export const submissionDetailSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'data', 'files', 'spam', 'createdAt', 'meta', 'deliveries'],
  properties: {
    ...submissionProperties,
    meta: metaSchema,
    deliveries: { type: 'array', items: deliverySchema },
  },
} as const;

/** A binary or text download (the schema documents it; the bytes are sent as they are). */
export const download = (contentType: string, description: string) =>
  ({ description, content: { [contentType]: { schema: { type: 'string', format: 'binary' } } } }) as const;

/** The form body of a submission: any fields, as JSON, urlencoded or multipart (contract D13). */
export const submissionBody = {
  description: 'The submitted fields: a JSON object, application/x-www-form-urlencoded, or multipart/form-data (files need uploadsEnabled)',
} as const;

export const submitQuery = {
  type: 'object',
  properties: { mode: { description: '`rest` for JSON answers; otherwise 303 redirects to the success or error page (contract D14)' } },
} as const;

export const submittedSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['success', 'code', 'message', 'url', 'id'],
  properties: {
    success: { type: 'boolean', const: true },
    code: { type: 'integer', const: 200 },
    message: { type: 'string' },
    url: { type: 'string', description: 'The success page URL a redirect would have led to' },
    id: { type: 'string', description: "The submission's id" },
  },
} as const;

/** The form interface's error object: the specification's, with the status as `code` and the error page URL. */
/** One refused field of a 422: Formspree's code (REQUIRED_FIELD_MISSING, TYPE_EMAIL, ...) or Flagpost's own (docs/errors.md). */
export const fieldErrorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['field', 'code', 'message'],
  properties: { field: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
} as const;

export const formErrorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['error', 'code', 'message', 'url'],
  properties: {
    error: { type: 'boolean', const: true },
    code: { type: 'integer' },
    message: { type: 'string' },
    url: { type: 'string' },
    errors: { type: 'array', description: "422 only: one entry per refused field (the form's field rules)", items: fieldErrorSchema },
  },
} as const;

export const redirect = { description: 'See Other: Location is the success or error page, with message and goBackUrl in its query' } as const;

export const resultPageQuery = {
  type: 'object',
  properties: {
    message: { description: 'The message to show' },
    goBackUrl: { description: 'Where the "Go back" link leads (http or https)' },
    sig: { description: 'Signature of message and goBackUrl; without a valid one the page shows neither' },
  },
} as const;

export const htmlPage = { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } } as const;

export const noContentPreflight = { description: "No content; the CORS headers allow the form's websites (contract D19)" } as const;

/** An access request's answer: the person's submissions of every form, with the form they went to. */
export const personalDataSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['submissions', 'events'],
  properties: {
    email: { type: 'string' },
    targetingKey: { type: 'string' },
    submissions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['form', 'id', 'createdAt', 'spam', 'data', 'files', 'meta'],
        properties: {
          form: { type: 'object', required: ['key', 'name'], properties: { key: { type: 'string' }, name: { type: 'string' } } },
          id: { type: 'string' },
          createdAt: { type: 'string' },
          spam: { type: 'boolean' },
          data: { type: 'object', additionalProperties: true },
          files: { type: 'array', items: fileSchema },
          meta: metaSchema,
        },
      },
    },
    events: {
      type: 'object',
      description: 'The experiment events whose targeting key is the address (as given and in lower case) or the targeting key',
      additionalProperties: false,
      required: ['exposures', 'tracked'],
      properties: {
        exposures: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['environmentId', 'flagKey', 'variant', 'timestamp'],
            properties: { environmentId: { type: 'string' }, flagKey: { type: 'string' }, variant: { type: 'string' }, timestamp: { type: 'string' } },
          },
        },
        tracked: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['environmentId', 'name', 'value', 'attributes', 'timestamp'],
            properties: {
              environmentId: { type: 'string' },
              name: { type: 'string' },
              value: { type: ['number', 'null'] },
              attributes: { type: ['object', 'null'], additionalProperties: true },
              timestamp: { type: 'string' },
            },
          },
        },
      },
    },
  },
} as const;

/** Path of the Formspree drop-in: `/formspree/f/{formKey}`, as Formspree's libraries build it. */
export const formspreeParams = {
  type: 'object',
  required: ['formKey'],
  properties: { formKey: { type: 'string', description: "The form's key (the one of /v1/s/{formKey})" } },
} as const;

/** Formspree's success answer: `next` is the thank-you page (the form's successUrl, else the built-in page). */
export const formspreeSuccessSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['ok', 'next'],
  properties: { ok: { type: 'boolean', const: true }, next: { type: 'string' } },
} as const;

/** Formspree's error answer: field errors carry `field`; form errors carry Formspree's code when there is one. */
export const formspreeErrorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['errors'],
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['message'],
        properties: { field: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
} as const;

const spamReasonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['check', 'detail'],
  properties: { check: { type: 'string' }, detail: { type: 'string' } },
} as const;

/** The spam checks to try, as `PATCH /admin/v1/forms/{formKey}` would save them. */
export const dryRunBody = {
  type: 'object',
  additionalProperties: false,
  required: ['spamChecks'],
  properties: { spamChecks: spamChecksSchema },
} as const;

export const dryRunSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['checked', 'spam', 'changed'],
  properties: {
    checked: { type: 'integer', description: 'Submissions looked at: the newest 1,000 at most' },
    spam: { type: 'integer', description: 'How many of them the checks call spam' },
    changed: {
      type: 'array',
      description: 'The submissions whose verdict would change, newest first',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'createdAt', 'spamBefore', 'spamAfter', 'spamReasons'],
        properties: {
          id: { type: 'string' },
          createdAt: { type: 'string' },
          spamBefore: { type: 'boolean' },
          spamAfter: { type: 'boolean' },
          spamReasons: { type: 'array', items: spamReasonSchema },
        },
      },
    },
  },
} as const;

/** GET /v1/s/{formKey}/rendered: the hidden field to add to the form, and its signed render timestamp. */
export const renderedSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['field', 'token'],
  properties: {
    field: { type: 'string', description: 'The name of the hidden field to send the token in (_flagpost_rendered)' },
    token: { type: 'string', description: 'When the form was rendered, signed by Flagpost' },
  },
} as const;

/** GET /v1/s/{formKey}/challenge: an ALTCHA challenge (altcha-lib's v2 shape), signed by Flagpost. */
export const challengeSchema = {
  type: 'object',
  additionalProperties: true,
  required: ['parameters', 'signature'],
  properties: {
    parameters: { type: 'object', additionalProperties: true, description: 'algorithm, nonce, salt, cost, keyLength, keyPrefix, expiresAt, data' },
    signature: { type: 'string' },
  },
} as const;
