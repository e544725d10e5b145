import { parseLimit } from '../http/paging.ts';
import { adminErrors, noContent, type RoutePlugin } from '../http/schemas.ts';
import { REDACTED } from '../identity/index.ts';
import type { Role } from '../identity/index.ts';
import { projectParams } from '../projects/index.ts';
import type { DeliveryAttempt } from '../delivery/index.ts';
import {
  createdWebhookSchema,
  createWebhookBody,
  deliveriesQuery,
  deliveryParams,
  updateWebhookBody,
  webhookDeliverySchema,
  webhookParams,
  webhookSchema,
} from './webhook.schemas.ts';
import type { WebhookService } from './webhook.service.ts';
import type { ProjectWebhook, WebhookDelivery } from './webhook.ts';

/** A webhook's URL is a credential (chat services' URLs are keys): viewers see it redacted. */
const viewOf = (role: Role, w: ProjectWebhook) => ({
  id: w.id,
  url: role === 'viewer' || role === 'none' ? REDACTED : w.url,
  events: w.events,
  preset: w.preset,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
});

const deliveryView = (d: WebhookDelivery, history: DeliveryAttempt[]) => ({
  id: d.id,
  seq: d.seq,
  event: d.event,
  status: d.status,
  attempts: d.attempts,
  nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
  lastError: d.lastError,
  createdAt: d.createdAt,
  deliveredAt: d.deliveredAt,
  payload: d.payload,
  history,
});

/** Project webhooks on flag changes (issue 23): viewers read them (URLs redacted), editors manage them. */
export const webhookAdminRoutes: RoutePlugin<{ webhooks: WebhookService }> = async (app, { webhooks }) => {
  app.post(
    '/projects/:projectKey/webhooks',
    {
      schema: {
        summary: 'Create a webhook on flag changes (the signing secret is answered once)',
        params: projectParams,
        body: createWebhookBody,
        response: { 201: createdWebhookSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { webhook, secret } = await webhooks.create(request.params.projectKey, request.body, request.actor);
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...viewOf(request.role, webhook), secret });
    },
  );

  app.get(
    '/projects/:projectKey/webhooks',
    {
      schema: {
        summary: "List a project's webhooks (never their secrets)",
        params: projectParams,
        response: { 200: { type: 'object', required: ['webhooks'], properties: { webhooks: { type: 'array', items: webhookSchema } } }, ...adminErrors },
      },
    },
    async (request) => ({ webhooks: (await webhooks.list(request.params.projectKey)).map((w) => viewOf(request.role, w)) }),
  );

  app.get(
    '/projects/:projectKey/webhooks/:id',
    { schema: { summary: 'One webhook', params: webhookParams, response: { 200: webhookSchema, ...adminErrors } } },
    async (request) => viewOf(request.role, await webhooks.get(request.params.projectKey, request.params.id)),
  );

  app.patch(
    '/projects/:projectKey/webhooks/:id',
    {
      schema: {
        summary: "Change a webhook's URL or events (absent keeps)",
        params: webhookParams,
        body: updateWebhookBody,
        response: { 200: webhookSchema, ...adminErrors },
      },
    },
    async (request) => viewOf(request.role, await webhooks.update(request.params.projectKey, request.params.id, request.body, request.actor)),
  );

  app.delete(
    '/projects/:projectKey/webhooks/:id',
    { schema: { summary: 'Delete a webhook with its delivery history', params: webhookParams, response: { 204: noContent, ...adminErrors } } },
    async (request, reply) => {
      await webhooks.delete(request.params.projectKey, request.params.id, request.actor);
      return reply.code(204).send();
    },
  );

  app.get(
    '/projects/:projectKey/webhooks/:id/deliveries',
    {
      schema: {
        summary: "A webhook's deliveries, newest first, with every attempt",
        params: webhookParams,
        querystring: deliveriesQuery,
        response: {
          200: { type: 'object', required: ['deliveries'], properties: { deliveries: { type: 'array', items: webhookDeliverySchema } } },
          ...adminErrors,
        },
      },
    },
    async (request) => ({
      deliveries: (await webhooks.deliveries(request.params.projectKey, request.params.id, parseLimit(request.query.limit))).map(({ delivery, attempts }) =>
        deliveryView(delivery, attempts),
      ),
    }),
  );

  app.post(
    '/projects/:projectKey/webhooks/:id/deliveries/:deliveryId/redeliver',
    {
      schema: {
        summary: "Send a delivery's event again, as a new delivery after the webhook's others",
        params: deliveryParams,
        response: { 202: webhookDeliverySchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const delivery = await webhooks.redeliver(request.params.projectKey, request.params.id, request.params.deliveryId, request.actor);
      return reply.code(202).send(deliveryView(delivery, []));
    },
  );
};
