import type { FastifyPluginAsync } from 'fastify';
import { type FormPatch, formView } from './form.ts';
import { createFormBody, updateFormBody } from './form.schemas.ts';
import type { FormService, FormWithSecret } from './form.service.ts';

type FormParams = { formKey: string };

/** Admin API for forms under /admin/v1 (contract "Admin API"). */
export const formAdminRoutes: FastifyPluginAsync<{ forms: FormService; publicUrl: string }> = async (app, { forms, publicUrl }) => {
  // The signing secret appears only in the answer that created it.
  const withSecret = ({ form, webhookSecret }: FormWithSecret) => ({ ...formView(form, publicUrl), ...(webhookSecret ? { webhookSecret } : {}) });

  app.post<{ Body: FormPatch & { name: string } }>('/forms', { schema: { body: createFormBody } }, async (request, reply) => {
    return reply.code(201).send(withSecret(await forms.create(request.body)));
  });

  app.get('/forms', async () => ({ forms: (await forms.list()).map((f) => formView(f, publicUrl)) }));

  app.get<{ Params: FormParams }>('/forms/:formKey', async (request) => formView(await forms.get(request.params.formKey), publicUrl));

  app.patch<{ Params: FormParams; Body: FormPatch }>('/forms/:formKey', { schema: { body: updateFormBody } }, async (request) =>
    withSecret(await forms.update(request.params.formKey, request.body ?? {})),
  );

  app.post<{ Params: FormParams }>('/forms/:formKey/webhook-secret', async (request) => ({
    webhookSecret: await forms.rotateWebhookSecret(request.params.formKey),
  }));

  app.delete<{ Params: FormParams }>('/forms/:formKey', async (request, reply) => {
    await forms.delete(request.params.formKey);
    return reply.code(204).send();
  });
};
