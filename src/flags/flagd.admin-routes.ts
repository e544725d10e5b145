import { adminErrors, type RoutePlugin } from '../http/schemas.ts';
import { bypassRequested, protectionQuery } from '../projects/index.ts';
import {
  environmentParams,
  flagdDefinitionSchema,
  flagdExportSchema,
  flagdImportResultSchema,
  playgroundAnswerSchema,
  playgroundBody,
} from './flagd.schemas.ts';
import type { FlagdService } from './flagd.service.ts';
import type { PlaygroundService } from './playground.service.ts';

export const flagdAdminRoutes: RoutePlugin<{ flagd: FlagdService; playground: PlaygroundService }> = async (app, { flagd, playground }) => {
  app.get(
    '/projects/:projectKey/environments/:envKey/flagd',
    {
      schema: {
        summary: "The environment's flags and the project's segments as a flagd flag definition",
        params: environmentParams,
        response: { 200: flagdExportSchema, ...adminErrors },
      },
    },
    async (request) => flagd.exportEnvironment(request.params.projectKey, request.params.envKey),
  );

  app.put(
    '/projects/:projectKey/environments/:envKey/flagd',
    {
      schema: {
        summary: 'Import a flagd flag definition into the environment: its flags created or updated, others left alone; all or nothing',
        params: environmentParams,
        querystring: protectionQuery,
        body: flagdDefinitionSchema,
        response: { 200: flagdImportResultSchema, ...adminErrors },
      },
    },
    async (request) =>
      flagd.importEnvironment(request.params.projectKey, request.params.envKey, request.body, request.actor, {
        bypassProtection: bypassRequested(request.query, request.role),
      }),
  );

  app.post(
    '/projects/:projectKey/environments/:envKey/evaluate',
    {
      // It changes nothing: a viewer may try contexts as OFREP clients do.
      config: { access: 'viewer' },
      schema: {
        summary: 'Playground: evaluate one flag or every flag of the environment for a context, with why (rules, conditions, split bucket)',
        params: environmentParams,
        body: playgroundBody,
        response: { 200: playgroundAnswerSchema, ...adminErrors },
      },
    },
    async (request) => ({
      flags: await playground.evaluate(request.params.projectKey, request.params.envKey, request.body.context, request.body.flag),
    }),
  );
};
