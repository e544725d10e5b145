import { adminErrors, noContent, type RoutePlugin } from '../http/schemas.ts';
import { bypassRequested, projectParams, protectionQuery } from '../projects/index.ts';
import {
  adminFlagSchema,
  createdFlagSchema,
  createFlagBody,
  environmentFlagParams,
  flagAcrossEnvironmentsSchema,
  flagParams,
  updateFlagAcrossEnvironmentsBody,
  updateFlagBody,
} from './flag.schemas.ts';
import type { FlagService, NewFlagChangeRequests } from './flag.service.ts';

export interface FlagAdminRouteDeps {
  flags: FlagService;
  /** Opens the change requests of a new flag's values in protected environments (answered by changes/). */
  changeRequests: NewFlagChangeRequests;
}

export const flagAdminRoutes: RoutePlugin<FlagAdminRouteDeps> = async (app, { flags, changeRequests }) => {
  app.post(
    '/projects/:projectKey/flags',
    {
      schema: {
        summary:
          'Create a flag in every environment of the project; in a protected one it starts switched off and what was asked for waits in a change request',
        params: projectParams,
        querystring: protectionQuery,
        body: createFlagBody,
        response: { 201: createdFlagSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { slug, ...values } = request.body;
      const bypassProtection = bypassRequested(request.query, request.role);
      return reply.code(201).send(await flags.createFlag(request.params.projectKey, slug, values, request.actor, { bypassProtection, changeRequests }));
    },
  );

  app.get(
    '/projects/:projectKey/flags',
    {
      schema: {
        summary: "List a project's flags with their value in every environment",
        params: projectParams,
        response: {
          200: { type: 'object', required: ['flags'], properties: { flags: { type: 'array', items: flagAcrossEnvironmentsSchema } } },
          ...adminErrors,
        },
      },
    },
    async (request) => ({ flags: await flags.listFlags(request.params.projectKey) }),
  );

  app.patch(
    '/projects/:projectKey/environments/:envKey/flags/:slug',
    {
      schema: {
        summary: 'Change a flag in one environment (absent fields keep their value, null clears)',
        params: environmentFlagParams,
        querystring: protectionQuery,
        body: updateFlagBody,
        response: { 200: adminFlagSchema, ...adminErrors },
      },
    },
    async (request) => {
      const { projectKey, envKey, slug } = request.params;
      const bypassProtection = bypassRequested(request.query, request.role);
      return flags.updateFlag(projectKey, envKey, slug, request.body, request.actor, { bypassProtection });
    },
  );

  app.patch(
    '/projects/:projectKey/flags/:slug',
    {
      schema: {
        summary: 'Rename a flag, set its tags, archive or restore it (in every environment); a rename is refused (409) while an environment is protected',
        params: flagParams,
        querystring: protectionQuery,
        body: updateFlagAcrossEnvironmentsBody,
        response: { 200: flagAcrossEnvironmentsSchema, ...adminErrors },
      },
    },
    async (request) => {
      const bypassProtection = bypassRequested(request.query, request.role);
      return flags.updateFlagAcrossEnvironments(request.params.projectKey, request.params.slug, request.body, request.actor, { bypassProtection });
    },
  );

  app.delete(
    '/projects/:projectKey/flags/:slug',
    {
      schema: {
        summary: 'Delete a flag from every environment, with its feedback; 409 while an environment is protected',
        params: flagParams,
        querystring: protectionQuery,
        response: { 204: noContent, ...adminErrors },
      },
    },
    async (request, reply) => {
      const bypassProtection = bypassRequested(request.query, request.role);
      await flags.deleteFlag(request.params.projectKey, request.params.slug, request.actor, { bypassProtection });
      return reply.code(204).send();
    },
  );
};
