import { adminErrors, noContent, type RoutePlugin } from '../http/schemas.ts';
import { nameBody, projectParams } from '../projects/index.ts';
import { apiKeyView } from './api-key.ts';
import { apiKeyParams, apiKeySchema, createdApiKeySchema } from './api-key.schemas.ts';
import type { ApiKeyService } from './api-key.service.ts';

export const apiKeyAdminRoutes: RoutePlugin<{ apiKeys: ApiKeyService }> = async (app, { apiKeys }) => {
  app.post(
    '/projects/:projectKey/api-keys',
    {
      config: { access: 'project_admin' },
      schema: {
        summary: 'Create an API key (for code reference uploads)',
        params: projectParams,
        body: nameBody,
        response: { 201: createdApiKeySchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { key, token } = await apiKeys.create(request.params.projectKey, request.body.name.trim(), request.actor);
      // The token is shown here once; only its hash is stored (contract D11).
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...apiKeyView(key), token });
    },
  );

  app.get(
    '/projects/:projectKey/api-keys',
    {
      schema: {
        summary: "List a project's API keys (never their tokens)",
        params: projectParams,
        response: { 200: { type: 'object', required: ['apiKeys'], properties: { apiKeys: { type: 'array', items: apiKeySchema } } }, ...adminErrors },
      },
    },
    async (request) => ({ apiKeys: (await apiKeys.list(request.params.projectKey)).map(apiKeyView) }),
  );

  app.delete(
    '/projects/:projectKey/api-keys/:id',
    { config: { access: 'project_admin' }, schema: { summary: 'Revoke an API key', params: apiKeyParams, response: { 204: noContent, ...adminErrors } } },
    async (request, reply) => {
      await apiKeys.revoke(request.params.projectKey, request.params.id, request.actor);
      return reply.code(204).send();
    },
  );
};
