import type { FastifyPluginAsync } from 'fastify';
import { environmentView, projectView } from './project.ts';
import type { ProjectService } from './project.service.ts';

const nameBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' } },
} as const;

type ProjectParams = { projectKey: string };

export const projectAdminRoutes: FastifyPluginAsync<{ projects: ProjectService }> = async (app, { projects }) => {
  app.post<{ Body: { name: string } }>('/projects', { schema: { body: nameBody } }, async (request, reply) => {
    return reply.code(201).send(projectView(await projects.createProject(request.body.name.trim())));
  });

  app.get('/projects', async () => ({ projects: (await projects.listProjects()).map(projectView) }));

  app.get<{ Params: ProjectParams }>('/projects/:projectKey', async (request) =>
    projectView(await projects.getProject(request.params.projectKey)),
  );

  app.post<{ Params: ProjectParams; Body: { name: string } }>(
    '/projects/:projectKey/environments',
    { schema: { body: nameBody } },
    async (request, reply) => {
      const env = await projects.createEnvironment(request.params.projectKey, request.body.name.trim());
      return reply.code(201).send(environmentView(env));
    },
  );
};
