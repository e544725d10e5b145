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

/** A form's deliveries under /admin/v1 (issue 34): a test delivery and re-sends. */
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
