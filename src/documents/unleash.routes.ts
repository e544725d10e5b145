import { adminErrors, type RoutePlugin } from '../http/schemas.ts';
import { unleashImportBody, unleashImportResultSchema } from './unleash.schemas.ts';
import type { UnleashImportService } from './unleash.service.ts';

export const unleashRoutes: RoutePlugin<{ unleash: UnleashImportService }> = async (app, { unleash }) => {
  app.post(
    '/imports/unleash',
    {
      schema: {
        summary: 'Import an Unleash export (toggles, strategies, segments, variants, dependencies) into a new or an existing project, in one transaction',
        body: unleashImportBody,
        response: { 200: unleashImportResultSchema, ...adminErrors },
      },
    },
    async (request) => {
      const { export: input, ...options } = request.body;
      return unleash.importUnleash(input, options, request.actor);
    },
  );
};
