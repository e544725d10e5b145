import { conditionSchema } from '../segments/index.ts';
import { MAX_TEMPLATE_LENGTH } from './mail-template.ts';

// JSON schemas of a form's e-mail and routing settings (issue 34; form-mail.ts). They check shape;
// form-mail.ts checks addresses, URLs, templates (they must parse) and conditions (the targeting engine's).

const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });
const email = { type: 'string', maxLength: 254 } as const;
const fieldName = { type: 'string', minLength: 1, maxLength: 200 } as const;
const template = (description: string) => ({ type: 'string', maxLength: MAX_TEMPLATE_LENGTH, description });
const conditions = {
  type: 'array',
  maxItems: 50,
  items: conditionSchema,
  description: "Conditions on the submission's fields (`topic` `equals` `sales`); every one must hold",
} as const;

const notifications = {
  type: 'object',
  additionalProperties: false,
  description: 'The notification e-mail: Reply-To, templates, copies and routing by condition',
  properties: {
    replyToField: { ...fieldName, description: 'Field whose single valid address becomes Reply-To (default: the first of email, _replyto)' },
    subject: template('Subject template, such as `New message from {{ name }}`'),
    fromName: template("Template of the sender's display name"),
    cc: { type: 'array', maxItems: 20, items: email },
    bcc: { type: 'array', maxItems: 20, items: email },
    routes: {
      type: 'array',
      maxItems: 20,
      description: 'Further notification addresses, each for the submissions whose fields meet its conditions',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['emails', 'conditions'],
        properties: { emails: { type: 'array', minItems: 1, maxItems: 20, items: email }, conditions },
      },
    },
  },
} as const;

const autoResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['enabled', 'subject', 'body'],
  description: 'The confirmation e-mail to the submitter (never for spam; one per address and form per 10 minutes)',
  properties: {
    enabled: { type: 'boolean' },
    toField: { ...fieldName, description: "Field holding the submitter's address (default: the first of email, _replyto)" },
    subject: template('Subject template'),
    body: template('HTML body template; values are escaped, the text part is made from it'),
    fromName: template("Template of the sender's display name"),
    replyTo: email,
    includeSubmission: { type: 'boolean', description: "Adds the submission's fields below the body" },
  },
} as const;

const webhooks = {
  type: 'array',
  maxItems: 20,
  description: 'Further webhooks beside `webhookUrl`, each sent when its conditions hold (signed with the same secret)',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: { url: { type: 'string', minLength: 1, maxLength: 2000 }, conditions },
  },
} as const;

/** The settings a create or PATCH body may hold. */
export const mailSettingsBody = {
  notifications: nullable(notifications),
  autoResponse: nullable(autoResponse),
  webhooks: nullable(webhooks),
} as const;

/** The same settings in the admin view of a form. */
export const mailSettingsView = {
  notifications: { anyOf: [notifications, { type: 'null' }] },
  autoResponse: { anyOf: [autoResponse, { type: 'null' }] },
  webhooks,
} as const;

export const MAIL_SETTINGS_VIEW_FIELDS = ['notifications', 'autoResponse', 'webhooks'] as const;
