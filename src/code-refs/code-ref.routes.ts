import type { FastifyPluginAsync } from 'fastify';
import type { ApiKeyService } from '../api-keys/index.ts';
import { AppError, message, messages } from '../errors.ts';
import { readKeyHeaders } from '../flags/index.ts';
import type { CodeReferenceFilter, CodeReferenceUpload } from './code-ref.ts';
import { codeRefsBody, codeRefsQuery } from './code-ref.schemas.ts';
import type { CodeRefService } from './code-ref.service.ts';

/**
 * POST /v1/flags/code-refs. The order of checks is contract D12: key headers (scope hook, 400), the API
 * key (this route's preParsing, before the body is even read: 401), the body schema (400), and the
 * environment (404).
 */
export function codeRefPublicRoutes(codeRefs: CodeRefService, apiKeys: ApiKeyService): FastifyPluginAsync {
  return async (app) => {
    app.post<{ Body: CodeReferenceUpload }>(
      '/code-refs',
      {
        schema: { body: codeRefsBody },
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

export const codeRefAdminRoutes: FastifyPluginAsync<{ codeRefs: CodeRefService }> = async (app, { codeRefs }) => {
  app.get<{ Params: { projectKey: string }; Querystring: CodeReferenceFilter }>(
    '/projects/:projectKey/code-refs',
    { schema: { querystring: codeRefsQuery } },
    async (request) => {
    const { slug, branch, projectName } = request.query;
    return { references: await codeRefs.list(request.params.projectKey, { slug, branch, projectName }) };
    },
  );
};
