import { AppError, messages } from '../errors.ts';
import { adminErrors, noContent, type RoutePlugin } from '../http/schemas.ts';
import { environmentView, projectView } from './project.ts';
import { environmentParams, environmentSchema, nameBody, projectParams, projectSchema, updateEnvironmentBody } from './project.schemas.ts';
import type { ProjectService } from './project.service.ts';

export const projectAdminRoutes: RoutePlugin<{ projects: ProjectService }> = async (app, { projects }) => {
  app.post(
    '/projects',
    {
      schema: {
        summary: 'Create a project with the development, staging and production environments',
        body: nameBody,
        response: { 201: projectSchema, ...adminErrors },
      },
    },
    async (request, reply) => reply.code(201).send(projectView(await projects.createProject(request.body.name.trim(), request.actor))),
  );

  app.get(
    '/projects',
    {
      // Each member sees the projects they have a role on; instance roles see every one (ADR 0033).
      config: { project: 'listing' },
      schema: {
        summary: 'List projects',
        response: { 200: { type: 'object', required: ['projects'], properties: { projects: { type: 'array', items: projectSchema } } }, ...adminErrors },
      },
    },
    async (request) => {
      const { all, ids } = request.projects;
      return { projects: (await projects.listProjects()).filter((p) => all || ids.has(p.id)).map(projectView) };
    },
  );

  app.get(
    '/projects/:projectKey',
    { schema: { summary: 'Get a project', params: projectParams, response: { 200: projectSchema, ...adminErrors } } },
    async (request) => projectView(await projects.getProject(request.params.projectKey)),
  );

  app.post(
    '/projects/:projectKey/environments',
    {
      config: { access: 'project_admin' },
      schema: {
        summary: 'Add an environment; it receives every flag of the project, disabled',
        params: projectParams,
        body: nameBody,
        response: { 201: environmentSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const env = await projects.createEnvironment(request.params.projectKey, request.body.name.trim(), request.actor);
      return reply.code(201).send(environmentView(env));
    },
  );

  app.patch(
    '/projects/:projectKey/environments/:envKey',
    {
      schema: {
        summary: 'Rename an environment (editors) or set its protection and required approvals (owners)',
        params: environmentParams,
        body: updateEnvironmentBody,
        response: { 200: environmentSchema, ...adminErrors },
      },
    },
    async (request) => {
      const { name, ...protection } = request.body;
      if ((protection.protected !== undefined || protection.requiredApprovals !== undefined) && request.role !== 'owner') {
        throw new AppError('forbidden', messages.roleForbidden);
      }
      const env = await projects.updateEnvironment(request.params.projectKey, request.params.envKey, { name: name?.trim(), ...protection }, request.actor);
      return environmentView(env);
    },
  );

  app.patch(
    '/projects/:projectKey',
    {
      schema: {
        summary: 'Rename a project (its key, which clients send, stays)',
        params: projectParams,
        body: nameBody,
        response: { 200: projectSchema, ...adminErrors },
      },
    },
    async (request) => projectView(await projects.renameProject(request.params.projectKey, request.body.name.trim(), request.actor)),
  );

  app.delete(
    '/projects/:projectKey',
    {
      // Everything in the project goes at once: owners only.
      config: { access: 'owner' },
      schema: {
        summary: 'Delete a project with its environments, flags, segments, API keys and code references (its history stays)',
        params: projectParams,
        response: { 204: noContent, ...adminErrors },
      },
    },
    async (request, reply) => {
      await projects.deleteProject(request.params.projectKey, request.actor);
      return reply.code(204).send();
    },
  );

  app.delete(
    '/projects/:projectKey/environments/:envKey',
    {
      // Environments are managed by project admins (and instance editors and owners): ADR 0033.
      config: { access: 'project_admin' },
      schema: {
        summary:
          'Delete an environment with its flag values and sync token; a project keeps at least one, and a protected one is refused (409) until an owner unprotects it',
        params: environmentParams,
        response: { 204: noContent, ...adminErrors },
      },
    },
    async (request, reply) => {
      await projects.deleteEnvironment(request.params.projectKey, request.params.envKey, request.actor);
      return reply.code(204).send();
    },
  );
};
