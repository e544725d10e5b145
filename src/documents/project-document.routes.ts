import { adminErrors, type RoutePlugin } from '../http/schemas.ts';
import { bypassRequested, projectParams, protectionQuery } from '../projects/index.ts';
import type { ProjectDocument } from './project-document.ts';
import { applyDocumentBody, applyResultSchema, projectDocumentAnswer } from './project-document.schemas.ts';
import type { ProjectDocumentService } from './project-document.service.ts';

/** Flags as code (issue 21): a project as one document, and a document applied to a project. */
export const projectDocumentRoutes: RoutePlugin<{ documents: ProjectDocumentService }> = async (app, { documents }) => {
  app.get(
    '/projects/:projectKey/document',
    {
      schema: {
        summary: 'The project as one document (environments, flags, variants, rules, segments, prerequisites; no keys or secrets)',
        params: projectParams,
        response: { 200: projectDocumentAnswer, ...adminErrors },
      },
    },
    async (request) => documents.exportProject(request.params.projectKey),
  );

  app.post(
    '/documents/apply',
    {
      schema: {
        summary:
          'Make a project match a document in one transaction (flags and segments not in it are deleted), with a change request for each protected environment it changes, or only plan it (dryRun)',
        querystring: protectionQuery,
        body: applyDocumentBody,
        response: { 200: applyResultSchema, ...adminErrors },
      },
    },
    async (request) => {
      const bypassProtection = bypassRequested(request.query, request.role);
      const { document, projectKey, dryRun, source } = request.body;
      return documents.apply(document as ProjectDocument, { projectKey, dryRun, bypassProtection, source }, request.actor);
    },
  );
};
