import { adminErrors, noContent, type RoutePlugin } from '../http/schemas.ts';
import { PROJECT_ROLES } from './access.ts';
import type { ProjectRoleService } from './project-role.service.ts';

const projectRoleSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['projectKey', 'projectName', 'role'],
  properties: {
    projectKey: { type: 'string' },
    projectName: { type: 'string' },
    role: { type: 'string', enum: PROJECT_ROLES, description: 'viewer reads, editor writes flags and segments, admin also manages environments and keys' },
  },
} as const;
const userParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 100 } } } as const;
const userProjectParams = {
  type: 'object',
  required: ['id', 'projectKey'],
  properties: { id: { type: 'string', maxLength: 100 }, projectKey: { type: 'string', maxLength: 100 } },
} as const;

/**
 * Owners give members roles on single projects (docs/adr/0033-project-roles.md). These routes name a
 * project but act on the member: they stay instance-wide (owners only).
 */
export const projectRoleRoutes: RoutePlugin<{ projectRoles: ProjectRoleService }> = async (app, { projectRoles }) => {
  app.get(
    '/users/:id/project-roles',
    {
      config: { access: 'owner' },
      schema: {
        summary: "A member's roles on single projects",
        params: userParams,
        response: {
          200: {
            type: 'object',
            additionalProperties: false,
            required: ['projectRoles'],
            properties: { projectRoles: { type: 'array', items: projectRoleSchema } },
          },
          ...adminErrors,
        },
      },
    },
    async (request) => ({ projectRoles: await projectRoles.list(request.params.id) }),
  );

  app.put(
    '/users/:id/project-roles/:projectKey',
    {
      config: { access: 'owner', project: 'instance' },
      schema: {
        summary: 'Give a member a role on one project (or change it)',
        params: userProjectParams,
        body: { type: 'object', additionalProperties: false, required: ['role'], properties: { role: projectRoleSchema.properties.role } },
        response: { 200: projectRoleSchema, ...adminErrors },
      },
    },
    async (request) => projectRoles.set(request.params.id, request.params.projectKey, request.body.role, request.actor),
  );

  app.delete(
    '/users/:id/project-roles/:projectKey',
    {
      config: { access: 'owner', project: 'instance' },
      schema: { summary: "Take a member's role on one project away", params: userProjectParams, response: { 204: noContent, ...adminErrors } },
    },
    async (request, reply) => {
      await projectRoles.remove(request.params.id, request.params.projectKey, request.actor);
      return reply.code(204).send();
    },
  );
};
