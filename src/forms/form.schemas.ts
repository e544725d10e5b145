import { MAIL_SETTINGS_VIEW_FIELDS, mailSettingsBody, mailSettingsView } from './form-mail.schemas.ts';

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });
const url = { type: 'string', minLength: 1, maxLength: 2000 };
const list = (item: Record<string, unknown>, maxItems: number) => nullable({ type: 'array', items: item, maxItems });

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
