import { MAIL_SETTINGS_VIEW_FIELDS, mailSettingsBody, mailSettingsView } from './form-mail.schemas.ts';

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });
const url = { type: 'string', minLength: 1, maxLength: 2000 };
const list = (item: Record<string, unknown>, maxItems: number) => nullable({ type: 'array', items: item, maxItems });

const fieldName = { type: 'string', minLength: 1, maxLength: 200 } as const;
const count = (maximum: number) => nullable({ type: 'integer', minimum: 1, maximum });

/** The rule of one field: the JSON Schema subset of issue 34 (patterns are checked as RE2 in field-rules.ts). */
const fieldRule = {
  type: 'object',
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['string', 'number', 'integer', 'boolean'] },
    format: { type: 'string', enum: ['email', 'uri', 'date'] },
    minLength: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    maxLength: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    pattern: { type: 'string', minLength: 1, maxLength: 1000 },
    enum: { type: 'array', minItems: 1, maxItems: 500, items: { type: ['string', 'number', 'boolean'] } },
    minimum: { type: 'number' },
    maximum: { type: 'number' },
    description: { type: 'string', maxLength: 500 },
  },
} as const;

/** `fieldRules`: one JSON Schema object over the submission's fields, in the subset of issue 34. */
export const fieldRulesSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'A JSON Schema subset over the fields (type, required, format, minLength/maxLength, pattern, enum, minimum/maximum, additionalProperties: false)',
  properties: {
    type: { type: 'string', enum: ['object'] },
    properties: { type: 'object', maxProperties: 200, propertyNames: fieldName, additionalProperties: fieldRule },
    required: { type: 'array', maxItems: 200, uniqueItems: true, items: fieldName },
    additionalProperties: { type: 'boolean' },
  },
} as const;

const mimeType = {
  type: 'string',
  minLength: 3,
  maxLength: 127,
  pattern: '^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/(\\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*)$',
} as const;

/** `filePolicy`: allowed types (detected from the bytes) and limits within the instance's. */
export const filePolicySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['allowedTypes'],
  description: 'Allowed file types, detected from the bytes (empty: any), and limits within the instance limits',
  properties: {
    allowedTypes: { type: 'array', maxItems: 100, items: mimeType },
    maxFileBytes: count(Number.MAX_SAFE_INTEGER),
    maxFiles: count(1000),
    maxTotalBytes: count(Number.MAX_SAFE_INTEGER),
  },
} as const;

const condition = {
  type: 'object',
  additionalProperties: false,
  required: ['attribute', 'operator', 'values'],
  properties: {
    attribute: { type: 'string', minLength: 1, maxLength: 200 },
    operator: { type: 'string' },
    values: { type: 'array', maxItems: 1000, items: { type: ['string', 'number', 'boolean'] } },
    negate: { type: 'boolean' },
    caseInsensitive: { type: 'boolean' },
  },
} as const;

/** `spamChecks`: each check optional and off by default (docs/adr/0046-spam-checks.md). */
export const spamChecksSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Spam checks beside honeypot and CAPTCHA; each absent one is off',
  properties: {
    duplicates: nullable({
      type: 'object',
      additionalProperties: false,
      required: ['enabled'],
      properties: { enabled: { type: 'boolean' }, windowMinutes: count(525_600) },
    }),
    minFillSeconds: nullable({ type: 'number', minimum: 0, maximum: 3600 }),
    disposableEmails: nullable({ type: 'boolean' }),
    rateLimit: nullable({ type: 'object', additionalProperties: false, properties: { perAddress: count(100_000), perMinute: count(1_000_000) } }),
    rules: nullable({ type: 'array', maxItems: 100, items: condition }),
    proofOfWork: nullable({ type: 'boolean' }),
  },
} as const;

/** Form settings of the admin API; URLs, origins, addresses and e-mails are checked in form.ts. */
const settings = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  projectKey: nullable({
    type: 'string',
    minLength: 1,
    maxLength: 100,
    description: 'The project the form belongs to; its roles apply to the form (null: instance-wide)',
  }),
  enabled: { type: 'boolean' },
  uploadsEnabled: { type: 'boolean' },
  honeypot: nullable({ type: 'string', maxLength: 100 }),
  websites: list({ type: 'string', maxLength: 500 }, 50),
  blockedIps: list({ type: 'string', maxLength: 64 }, 1000),
  successUrl: nullable(url),
  errorUrl: nullable(url),
  redirectUrl: nullable(url),
  webhookUrl: nullable(url),
  notifyEmails: list({ type: 'string', maxLength: 254 }, 20),
  slackWebhookUrl: nullable(url),
  discordWebhookUrl: nullable(url),
  retentionDays: nullable({ type: 'integer', minimum: 1, maximum: 36500 }),
  deleteFilesAfterDelivery: { type: 'boolean' },
  captcha: nullable({
    type: 'object',
    additionalProperties: false,
    required: ['provider', 'secret'],
    description: 'CAPTCHA check of submissions; the secret is write-only',
    properties: {
      provider: { type: 'string', enum: ['turnstile', 'hcaptcha', 'recaptcha'] },
      secret: { type: 'string', minLength: 1, maxLength: 500 },
      minScore: nullable({ type: 'number', minimum: 0, maximum: 1 }),
    },
  }),
  ...mailSettingsBody,
  fieldRules: nullable(fieldRulesSchema),
  filePolicy: nullable(filePolicySchema),
  spamChecks: nullable(spamChecksSchema),
  analytics: nullable({
    type: 'object',
    additionalProperties: false,
    required: ['views'],
    description: 'What the form counts beside submissions: views (GET /v1/s/{formKey}/view) for a conversion rate',
    properties: { views: { type: 'boolean' } },
  }),
} as const;

/**
 * A form in a project document (forms as code, issue 34): its settings as PATCH takes them, without the
 * project (the document's); secrets (`captcha.secret`, `slackWebhookUrl`, `discordWebhookUrl`) may be
 * `$NAME` references (form-document.ts).
 */
export const documentFormSchema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: Object.fromEntries(Object.entries(settings).filter(([name]) => name !== 'projectKey')) as Omit<typeof settings, 'projectKey'>,
} as const;

export const createFormBody = { type: 'object', required: ['name'], additionalProperties: false, properties: settings } as const;

/** PATCH: an absent field keeps its value, null clears it (contract "Admin API"). */
export const updateFormBody = { type: 'object', additionalProperties: false, properties: settings } as const;

export const formParams = {
  type: 'object',
  required: ['formKey'],
  properties: { formKey: { type: 'string', description: "The form's key, as in its endpoint /v1/s/{formKey}" } },
} as const;

const stringList = { type: 'array', items: { type: 'string' } } as const;

/** The admin view of a form; `webhookSecret` only in the answer that generated it. */
export const formSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'key',
    'name',
    'projectKey',
    'endpoint',
    'enabled',
    'uploadsEnabled',
    'honeypot',
    'websites',
    'blockedIps',
    'successUrl',
    'errorUrl',
    'redirectUrl',
    'webhookUrl',
    'notifyEmails',
    'slackWebhookUrl',
    'discordWebhookUrl',
    'retentionDays',
    'deleteFilesAfterDelivery',
    'captcha',
    ...MAIL_SETTINGS_VIEW_FIELDS,
    'fieldRules',
    'filePolicy',
    'spamChecks',
    'analytics',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    key: { type: 'string' },
    projectKey: { type: ['string', 'null'], description: 'The project the form belongs to; null: instance-wide' },
    name: { type: 'string' },
    endpoint: { type: 'string', description: 'The URL forms post to' },
    enabled: { type: 'boolean' },
    uploadsEnabled: { type: 'boolean' },
    honeypot: { type: ['string', 'null'] },
    websites: stringList,
    blockedIps: stringList,
    successUrl: { type: ['string', 'null'] },
    errorUrl: { type: ['string', 'null'] },
    redirectUrl: { type: ['string', 'null'] },
    webhookUrl: { type: ['string', 'null'] },
    notifyEmails: stringList,
    slackWebhookUrl: { type: ['string', 'null'] },
    discordWebhookUrl: { type: ['string', 'null'] },
    retentionDays: { type: ['integer', 'null'], description: 'Days submissions are kept; null: until deleted' },
    deleteFilesAfterDelivery: { type: 'boolean' },
    captcha: {
      description: 'The CAPTCHA check (never its secret), or null',
      anyOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['provider', 'minScore'],
          properties: { provider: { type: 'string' }, minScore: { type: ['number', 'null'] } },
        },
        { type: 'null' },
      ],
    },
    ...mailSettingsView,
    fieldRules: { type: ['object', 'null'], additionalProperties: true, description: 'The field rules, or null' },
    filePolicy: { type: ['object', 'null'], additionalProperties: true, description: 'The file policy, or null' },
    spamChecks: { type: ['object', 'null'], additionalProperties: true, description: 'The spam checks, or null' },
    analytics: {
      description: 'What the form counts beside submissions, or null (no views counted)',
      anyOf: [{ type: 'object', additionalProperties: false, required: ['views'], properties: { views: { type: 'boolean' } } }, { type: 'null' }],
    },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    webhookSecret: { type: 'string', description: 'The webhook signing secret, shown once when generated' },
  },
} as const;

/** A form in the list, with how many submissions it has (the dashboard's form list). */
export const listedFormSchema = {
  ...formSchema,
  required: [...formSchema.required, 'submissionCount', 'spamCount'],
  properties: {
    ...formSchema.properties,
    submissionCount: { type: 'integer', description: 'Submissions of the form, spam included' },
    spamCount: { type: 'integer', description: 'Submissions marked as spam' },
  },
} as const;

export const webhookSecretSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['webhookSecret'],
  properties: { webhookSecret: { type: 'string' } },
} as const;
