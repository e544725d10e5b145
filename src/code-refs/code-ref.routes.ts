import type { ApiKeyService } from '../api-keys/index.ts';
import { AppError, message, messages } from '../errors.ts';
import { readKeyHeaders } from '../evaluation/index.ts';
import { adminErrors, publicErrors, type RoutePlugin } from '../http/schemas.ts';
import { projectParams } from '../projects/index.ts';
import {
  codeRefsBody,
  codeRefsHeaders,
  codeRefsQuery,
  codeRefsStoredSchema,
  deleteBranchQuery,
  removalSchema,
  staleFlagsQuery,
  staleReportSchema,
  storedCodeRefSchema,
} from './code-ref.schemas.ts';
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
        const scope = request.headers['x-flagpost-scope'] === 'branch' ? 'branch' : 'slugs';
        const { slugs, removedSlugs } = await codeRefs.upload(projectKey, environmentKey, request.body, scope);
        const text =
          scope === 'branch'
            ? message('codeRefsStoredBranch', { count: slugs, branch: request.body.branch, removed: removedSlugs.length })
            : message('codeRefsStored', { count: slugs, branch: request.body.branch });
        return reply.code(201).header('cache-control', 'no-store').send({ success: true, message: text });
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

  app.delete(
    '/projects/:projectKey/code-refs',
    {
      schema: {
        summary: "Delete a branch's code references (the branch was deleted in git), in every projectName or one",
        params: projectParams,
        querystring: deleteBranchQuery,
        response: {
          200: { type: 'object', additionalProperties: false, required: ['deleted'], properties: { deleted: { type: 'integer' } } },
          ...adminErrors,
        },
      },
    },
    async (request) => codeRefs.deleteBranch(request.params.projectKey, request.query.branch, request.query.projectName, request.actor),
  );

  app.get(
    '/projects/:projectKey/code-refs/removals',
    {
      schema: {
        summary: 'Slugs that whole-branch uploads no longer reported: when, and the references last seen',
        params: projectParams,
        querystring: codeRefsQuery,
        response: {
          200: { type: 'object', additionalProperties: false, required: ['removals'], properties: { removals: { type: 'array', items: removalSchema } } },
          ...adminErrors,
        },
      },
    },
    async (request) => {
      const { slug, branch, projectName } = request.query;
      return { removals: await codeRefs.listRemovals(request.params.projectKey, { slug, branch, projectName }) };
    },
  );

  app.get(
    '/projects/:projectKey/stale-flags',
    {
      schema: {
        summary: 'Flags ready for clean-up: expired but referenced, unreferenced, unchanged for N days, or not evaluated for N days',
        params: projectParams,
        querystring: staleFlagsQuery,
        response: { 200: staleReportSchema, ...adminErrors },
      },
    },
    async (request) =>
      codeRefs.staleReport(request.params.projectKey, readDays(request.query.days, 'days'), readDays(request.query.unevaluatedDays, 'unevaluatedDays')),
  );
};

/** The `days` and `unevaluatedDays` of the stale-flag report: a whole number from 1 to 3650, 30 when absent. */
function readDays(text: string | undefined, name: string): number {
  if (text === undefined) return 30;
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1 || Number(text) > 3650) {
    throw AppError.validation([{ field: `querystring.${name}`, reason: 'must be a whole number from 1 to 3650' }]);
  }
  return Number(text);
}
