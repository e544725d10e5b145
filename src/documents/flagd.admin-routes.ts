import { adminErrors, type RoutePlugin } from '../http/schemas.ts';
import { bypassRequested, protectionQuery } from '../projects/index.ts';
import { environmentParams } from '../flags/index.ts';
import { flagdDefinitionSchema, flagdExportSchema, flagdImportResultSchema } from './flagd.schemas.ts';
import type { FlagdService } from './flagd.service.ts';

export const flagdAdminRoutes: RoutePlugin<{ flagd: FlagdService }> = async (app, { flagd }) => {
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
};
