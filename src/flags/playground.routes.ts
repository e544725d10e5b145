import { adminErrors, type RoutePlugin } from '../http/schemas.ts';
import { environmentParams, playgroundAnswerSchema, playgroundBody } from './playground.schemas.ts';
import type { PlaygroundService } from './playground.service.ts';

export const playgroundRoutes: RoutePlugin<{ playground: PlaygroundService }> = async (app, { playground }) => {
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
