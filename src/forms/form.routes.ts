import type { FastifyRequest } from 'fastify';
import { AppError, messages } from '../errors.ts';
import { adminErrors, noContent, type RoutePlugin } from '../http/schemas.ts';
import { redactFields } from '../identity/index.ts';
import { formView } from './form.ts';
import { createFormBody, formParams, formSchema, listedFormSchema, updateFormBody, webhookSecretSchema } from './form.schemas.ts';
import type { FormService, FormWithSecret } from './form.service.ts';

/** How many submissions (all, and spam) each form has; the submissions capability answers it. */
/** How many submissions each form has (the submissions capability answers; a port owned by forms). */
export interface SubmissionCounts {
  countsOf(formIds: readonly string[]): Promise<Map<string, { total: number; spam: number }>>;
}

/** Admin API for forms under /admin/v1 (contract "Admin API"). */
export const formAdminRoutes: RoutePlugin<{ forms: FormService; publicUrl: string; submissionCounts: SubmissionCounts }> = async (
  app,
  { forms, publicUrl, submissionCounts },
) => {
  // The signing secret appears only in the answer that created it.
  const withSecret = ({ form, webhookSecret }: FormWithSecret) => ({ ...formView(form, publicUrl), ...(webhookSecret ? { webhookSecret } : {}) });
  // Moving a form between projects takes a role on every project: an instance-wide one (ADR 0033).
  const mayMove = (request: FastifyRequest, body: { projectKey?: unknown } | undefined) => {
    if (body?.projectKey !== undefined && !request.projects.all) throw new AppError('forbidden', messages.roleForbidden);
  };

  app.post(
    '/forms',
    { schema: { summary: 'Create a form', body: createFormBody, response: { 201: formSchema, ...adminErrors } } },
    // An answer may carry the webhook secret: never kept by a cache.
    async (request, reply) => {
      mayMove(request, request.body);
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(withSecret(await forms.create(request.body, request.actor)));
    },
  );

  app.get(
    '/forms',
    {
      // Each member sees the forms of their projects (instance-wide forms: instance roles only).
      config: { project: 'listing' },
      schema: {
        summary: 'List forms, newest first',
        response: {
          200: { type: 'object', additionalProperties: false, required: ['forms'], properties: { forms: { type: 'array', items: listedFormSchema } } },
          ...adminErrors,
        },
      },
    },
    async (request) => {
      const { all, ids } = request.projects;
      const list = (await forms.list()).filter((f) => all || (f.projectId !== null && ids.has(f.projectId)));
      const counts = await submissionCounts.countsOf(list.map((f) => f.id));
      return {
        forms: list.map((f) => ({
          ...redactFields(request.role, formView(f, publicUrl)),
          submissionCount: counts.get(f.id)?.total ?? 0,
          spamCount: counts.get(f.id)?.spam ?? 0,
        })),
      };
    },
  );

  app.get('/forms/:formKey', { schema: { summary: 'Get a form', params: formParams, response: { 200: formSchema, ...adminErrors } } }, async (request) =>
    redactFields(request.role, formView(await forms.get(request.params.formKey), publicUrl)),
  );

  app.patch(
    '/forms/:formKey',
    {
      schema: {
        summary: "Change a form's settings (absent fields keep their value, null clears)",
        params: formParams,
        body: updateFormBody,
        response: { 200: formSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      mayMove(request, request.body);
      return reply.header('cache-control', 'no-store').send(withSecret(await forms.update(request.params.formKey, request.body ?? {}, request.actor)));
    },
  );

  app.post(
    '/forms/:formKey/webhook-secret',
    { schema: { summary: "Replace the form's webhook signing secret", params: formParams, response: { 200: webhookSecretSchema, ...adminErrors } } },
    async (request, reply) =>
      reply.header('cache-control', 'no-store').send({ webhookSecret: await forms.rotateWebhookSecret(request.params.formKey, request.actor) }),
  );

  app.delete(
    '/forms/:formKey',
    { schema: { summary: 'Delete a form with its submissions, files and deliveries', params: formParams, response: { 204: noContent, ...adminErrors } } },
    async (request, reply) => {
      await forms.delete(request.params.formKey, request.actor);
      return reply.code(204).send();
    },
  );
};
