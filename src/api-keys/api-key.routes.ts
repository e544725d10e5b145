import type { FastifyPluginAsync } from 'fastify';
import { apiKeyView } from './api-key.ts';
import type { ApiKeyService } from './api-key.service.ts';

const nameBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' } },
} as const;

type ProjectParams = { projectKey: string };

export const apiKeyAdminRoutes: FastifyPluginAsync<{ apiKeys: ApiKeyService }> = async (app, { apiKeys }) => {
  app.post<{ Params: ProjectParams; Body: { name: string } }>(
    '/projects/:projectKey/api-keys',
    { schema: { body: nameBody } },
    async (request, reply) => {
      const { key, token } = await apiKeys.create(request.params.projectKey, request.body.name.trim());
      // The token is shown here once; only its hash is stored (contract D11).
      return reply.code(201).header('cache-control', 'no-store').send({ ...apiKeyView(key), token });
    },
  );

  app.get<{ Params: ProjectParams }>('/projects/:projectKey/api-keys', async (request) => ({
    apiKeys: (await apiKeys.list(request.params.projectKey)).map(apiKeyView),
  }));

  app.delete<{ Params: ProjectParams & { id: string } }>('/projects/:projectKey/api-keys/:id', async (request, reply) => {
    await apiKeys.revoke(request.params.projectKey, request.params.id);
    return reply.code(204).send();
  });
};
