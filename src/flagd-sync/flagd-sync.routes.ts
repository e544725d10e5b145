import { adminErrors, noContent, type RoutePlugin } from '../http/schemas.ts';
import { syncTokenView } from './flagd-sync-token.ts';
import { createdSyncTokenSchema, environmentParams, syncTokenInfoSchema } from './flagd-sync.schemas.ts';
import type { FlagdSyncService } from './flagd-sync.service.ts';

export const flagdSyncAdminRoutes: RoutePlugin<{ flagdSync: FlagdSyncService }> = async (app, { flagdSync }) => {
  app.get(
    '/projects/:projectKey/environments/:envKey/flagd-sync-token',
    {
      schema: {
        summary: 'Whether the environment has a flagd sync token, and its visible prefix (never the token)',
        params: environmentParams,
        response: { 200: syncTokenInfoSchema, ...adminErrors },
      },
    },
    async (request) => syncTokenView(await flagdSync.findToken(request.params.projectKey, request.params.envKey)),
  );

  app.post(
    '/projects/:projectKey/environments/:envKey/flagd-sync-token',
    {
      config: { access: 'project_admin' },
      schema: {
        summary: "Create the environment's flagd sync token, replacing the one it had (providers using that one are disconnected)",
        params: environmentParams,
        response: { 201: createdSyncTokenSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { info, token } = await flagdSync.rotateToken(request.params.projectKey, request.params.envKey, request.actor);
      // Shown here once; only its hash is stored.
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...syncTokenView(info), token, selector: `flagpost:${token}` });
    },
  );

  app.delete(
    '/projects/:projectKey/environments/:envKey/flagd-sync-token',
    {
      config: { access: 'project_admin' },
      schema: {
        summary: "Revoke the environment's flagd sync token; providers using it are disconnected",
        params: environmentParams,
        response: { 204: noContent, ...adminErrors },
      },
    },
    async (request, reply) => {
      await flagdSync.revokeToken(request.params.projectKey, request.params.envKey, request.actor);
      return reply.code(204).send();
    },
  );
};
