import { mailSettingsBody } from '../forms/index.ts';
import { adminErrors, type RoutePlugin } from '../http/schemas.ts';
import { redactDelivery } from '../identity/index.ts';
import { deliveryView } from './outbox.ts';
import { deliverySchema, formKeyParams } from './submission.schemas.ts';
import type { SubmissionDeliveryService } from './submission-delivery.service.ts';

const deliveryParams = {
  type: 'object',
  required: ['formKey', 'deliveryId'],
  properties: { formKey: { type: 'string' }, deliveryId: { type: 'string' } },
} as const;

const testDeliveryBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    data: {
      type: 'object',
      maxProperties: 100,
      additionalProperties: { type: ['string', 'number', 'boolean', 'null', 'array'] },
      description: 'The fields of the test submission (default: a name and a message); an `email` field tries Reply-To and the auto-response',
    },
  },
} as const;

const testDeliverySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['deliveries'],
  properties: {
    deliveries: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['kind', 'target', 'ok', 'statusCode', 'error'],
        properties: {
          kind: { type: 'string' },
          target: { type: 'string' },
          ok: { type: 'boolean' },
          statusCode: { type: ['integer', 'null'] },
          error: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;

const mailPreviewBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    data: {
      ...testDeliveryBody.properties.data,
      description: 'The fields of the sample submission (default: a name, an e-mail address and a message)',
    },
    notifications: { ...mailSettingsBody.notifications, description: 'Unsaved notification settings to render with (absent: the saved ones)' },
    autoResponse: { ...mailSettingsBody.autoResponse, description: 'Unsaved auto-response settings to render with (absent: the saved ones)' },
  },
} as const;

const renderedMail = {
  type: 'object',
  additionalProperties: false,
  required: ['subject', 'html', 'text'],
  properties: {
    subject: { type: 'string' },
    html: { type: 'string', description: 'The HTML part, every field value escaped' },
    text: { type: 'string', description: 'The text part, made from the HTML' },
    fromName: { type: 'string', description: "The sender's display name (the address stays FLAGPOST_MAIL_FROM's)" },
    replyTo: { type: 'string' },
    cc: { type: 'array', items: { type: 'string' } },
    bcc: { type: 'array', items: { type: 'string' } },
  },
} as const;

const mailPreviewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['notification', 'autoResponse'],
  properties: {
    notification: {
      ...renderedMail,
      required: [...renderedMail.required, 'to'],
      properties: {
        ...renderedMail.properties,
        to: {
          type: 'array',
          items: { type: 'string' },
          description: 'Where it would go for these fields: notifyEmails and the routes whose conditions hold (the first gets the CC and BCC)',
        },
      },
    },
    autoResponse: {
      description: 'The confirmation to the submitter, or null when none would go (off, or no single valid address in the fields)',
      anyOf: [
        { ...renderedMail, required: [...renderedMail.required, 'to'], properties: { ...renderedMail.properties, to: { type: 'string' } } },
        { type: 'null' },
      ],
    },
  },
} as const;

/** A form's deliveries under /admin/v1 (issue 34): a test delivery, re-sends and a preview of the e-mails. */
export const submissionDeliveryRoutes: RoutePlugin<{ deliveries: SubmissionDeliveryService }> = async (app, { deliveries }) => {
  app.post(
    '/forms/:formKey/test-delivery',
    {
      schema: {
        summary: 'Send a test of every delivery of the form at once (nothing is stored) and answer each outcome',
        params: formKeyParams,
        body: testDeliveryBody,
        response: { 200: testDeliverySchema, ...adminErrors },
      },
    },
    async (request) => {
      const results = await deliveries.testDelivery(request.params.formKey, request.body?.data);
      return { deliveries: results.map((r) => redactDelivery(request.role, r)) };
    },
  );

  app.post(
    '/forms/:formKey/mail-preview',
    {
      schema: {
        summary: 'Render the notification and the auto-response of a sample submission with the real templates (nothing is sent or stored)',
        params: formKeyParams,
        body: mailPreviewBody,
        response: { 200: mailPreviewSchema, ...adminErrors },
      },
    },
    async (request) => deliveries.mailPreview(request.params.formKey, request.body ?? {}),
  );

  app.post(
    '/forms/:formKey/deliveries/:deliveryId/resend',
    {
      schema: {
        summary: 'Queue a delivered or failed delivery again, due now (its history stays)',
        params: deliveryParams,
        response: { 200: deliverySchema, ...adminErrors },
      },
    },
    async (request) => {
      const { delivery, attempts } = await deliveries.resend(request.params.formKey, request.params.deliveryId, request.actor);
      return redactDelivery(request.role, deliveryView(delivery, attempts));
    },
  );

  app.post(
    '/forms/:formKey/deliveries/resend-failed',
    {
      schema: {
        summary: 'Queue every failed delivery of the form again, due now',
        params: formKeyParams,
        response: {
          200: { type: 'object', additionalProperties: false, required: ['resent'], properties: { resent: { type: 'integer' } } },
          ...adminErrors,
        },
      },
    },
    async (request) => ({ resent: await deliveries.resendFailed(request.params.formKey, request.actor) }),
  );
};
