import type { FastifyPluginAsync } from 'fastify';
import type { FlagValues } from './flag.ts';
import { createFlagBody, updateFlagBody } from './flag.schemas.ts';
import type { FlagService } from './flag.service.ts';

type ProjectParams = { projectKey: string };
type FlagParams = { projectKey: string; slug: string };
type EnvFlagParams = { projectKey: string; envKey: string; slug: string };

export const flagAdminRoutes: FastifyPluginAsync<{ flags: FlagService }> = async (app, { flags }) => {
  app.post<{ Params: ProjectParams; Body: FlagValues & { slug: string } }>(
    '/projects/:projectKey/flags',
    { schema: { body: createFlagBody } },
    async (request, reply) => {
      const { slug, ...values } = request.body;
      return reply.code(201).send(await flags.createFlag(request.params.projectKey, slug, values));
    },
  );

  app.get<{ Params: ProjectParams }>('/projects/:projectKey/flags', async (request) => ({
    flags: await flags.listFlags(request.params.projectKey),
  }));

  app.patch<{ Params: EnvFlagParams; Body: FlagValues }>(
    '/projects/:projectKey/environments/:envKey/flags/:slug',
    { schema: { body: updateFlagBody } },
    async (request) => {
      const { projectKey, envKey, slug } = request.params;
      return flags.updateFlag(projectKey, envKey, slug, request.body);
    },
  );

  app.delete<{ Params: FlagParams }>('/projects/:projectKey/flags/:slug', async (request, reply) => {
    await flags.deleteFlag(request.params.projectKey, request.params.slug);
    return reply.code(204).send();
  });
};
