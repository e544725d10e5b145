import type { ApiKeyService } from '../api-keys/index.ts';
import { AppError, message, messages } from '../errors.ts';
import { readKeyHeaders } from '../flags/index.ts';
import { adminErrors, publicErrors, type RoutePlugin } from '../http/schemas.ts';
import { projectParams } from '../projects/index.ts';
import { codeRefsBody, codeRefsHeaders, codeRefsQuery, codeRefsStoredSchema, storedCodeRefSchema } from './code-ref.schemas.ts';
import type { CodeRefService } from './code-ref.service.ts';

/**
 * POST /v1/flags/code-refs. The order of checks is contract D12: key headers (scope hook, 400), the API
 * key (this route's preParsing, before the body is even read: 401), the body schema (400), and the
 * environment (404).
 */
export function codeRefPublicRoutes(codeRefs: CodeRefService, apiKeys: ApiKeyService): RoutePlugin {
  return async (app) => {
    app.post(
      '/code-refs',
      {
        schema: {
          summary: 'Upload where flags are used in code; replaces the scope (projectName, branch) of every slug sent',
          headers: codeRefsHeaders,
          body: codeRefsBody,
          response: { 201: codeRefsStoredSchema, ...publicErrors },
        },
        config: { surface: 'flags' },
        // Before the body is read, after the rate limit's onRequest, so that key guessing is counted.
        preParsing: async (request) => {
          const { projectKey } = readKeyHeaders(request);
          const token = request.headers['x-api-key'];
          if (typeof token !== 'string' || token === '') throw new AppError('unauthorized', messages.missingApiKey);
          if (!(await apiKeys.verify(projectKey, token))) throw new AppError('unauthorized', messages.invalidApiKey);
        },
      },
      async (request, reply) => {
        const { projectKey, environmentKey } = readKeyHeaders(request);
        const { slugs } = await codeRefs.upload(projectKey, environmentKey, request.body);
        return reply
          .code(201)
          .header('cache-control', 'no-store')
          .send({ success: true, message: message('codeRefsStored', { count: slugs, branch: request.body.branch }) });
      },
    );
  };
}

export const codeRefAdminRoutes: RoutePlugin<{ codeRefs: CodeRefService }> = async (app, { codeRefs }) => {
  app.get(
    '/projects/:projectKey/code-refs',
    {
      schema: {
        summary: "A project's code references, filtered by slug, branch or projectName",
        params: projectParams,
        querystring: codeRefsQuery,
        response: {
          200: { type: 'object', required: ['references'], properties: { references: { type: 'array', items: storedCodeRefSchema } } },
          ...adminErrors,
        },
      },
    },
    async (request) => {
      const { slug, branch, projectName } = request.query;
      return { references: await codeRefs.list(request.params.projectKey, { slug, branch, projectName }) };
    },
  );
};
