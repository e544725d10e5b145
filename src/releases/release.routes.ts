import { adminErrors, noContent, type RoutePlugin } from '../http/schemas.ts';
import { bypassRequested, projectParams, protectionQuery } from '../projects/index.ts';
import type { Guardrail, ReleaseStep } from './release.ts';
import {
  createTemplateBody,
  releaseListParams,
  releaseListSchema,
  releaseParams,
  releaseReadingsSchema,
  releaseSchema,
  startReleaseBody,
  templateParams,
  templateSchema,
  updateTemplateBody,
} from './release.schemas.ts';
import type { ReleaseService } from './release.service.ts';
import type { ReleaseTemplateService } from './release-template.service.ts';
import { templateView } from './release-view.ts';

export interface ReleaseRouteDeps {
  releases: ReleaseService;
  templates: ReleaseTemplateService;
}

const RELEASES = '/projects/:projectKey/environments/:envKey/flags/:slug/releases';
const TEMPLATES = '/projects/:projectKey/release-templates';
const ACTIONS = ['approve', 'pause', 'resume', 'rollback', 'cancel'] as const;
const SUMMARIES: Record<(typeof ACTIONS)[number], string> = {
  approve: 'Approve the step a release waits for (someone other than its creator where the environment requires approvals)',
  pause: 'Pause a release (its split stays; the guard stops moving it)',
  resume: 'Resume a paused release',
  rollback: 'Roll a release back: everyone on the baseline',
  cancel: 'Cancel a release: everyone on the baseline',
};

/**
 * Releases of a flag in an environment and the project's release templates (issue 33): viewers read,
 * editors start and move releases and manage templates, as they change the flags releases write.
 */
export const releaseAdminRoutes: RoutePlugin<ReleaseRouteDeps> = async (app, { releases, templates }) => {
  app.post(
    RELEASES,
    {
      schema: {
        summary: 'Start a release of a flag (409 while another is active)',
        params: releaseListParams,
        querystring: protectionQuery,
        body: startReleaseBody,
        response: { 201: releaseSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { projectKey, envKey, slug } = request.params;
      const body = request.body as { variant: string; baseline: string; steps?: ReleaseStep[]; guardrails?: Guardrail[]; template?: string };
      const release = await releases.start(projectKey, envKey, slug, body, request.actor, { bypassProtection: bypassRequested(request.query, request.role) });
      return reply.code(201).send(releases.view(release));
    },
  );

  app.get(
    RELEASES,
    {
      schema: { summary: "A flag's releases in an environment, newest first", params: releaseListParams, response: { 200: releaseListSchema, ...adminErrors } },
    },
    async (request) => {
      const { projectKey, envKey, slug } = request.params;
      return { releases: (await releases.list(projectKey, envKey, slug)).map((r) => releases.view(r)) };
    },
  );

  app.get(
    `${RELEASES}/:releaseId`,
    { schema: { summary: 'One release', params: releaseParams, response: { 200: releaseSchema, ...adminErrors } } },
    async (request) => {
      const { projectKey, envKey, slug, releaseId } = request.params;
      return releases.view(await releases.get(projectKey, envKey, slug, releaseId));
    },
  );

  app.get(
    `${RELEASES}/:releaseId/readings`,
    {
      schema: {
        summary: "A release's guardrail readings over time (oldest first)",
        params: releaseParams,
        response: { 200: releaseReadingsSchema, ...adminErrors },
      },
    },
    async (request) => {
      const { projectKey, envKey, slug, releaseId } = request.params;
      const readings = await releases.readings(projectKey, envKey, slug, releaseId);
      return { readings: readings.map((r) => ({ ...r, reading: { ...r.reading } })) };
    },
  );

  for (const action of ACTIONS) {
    app.post(
      `${RELEASES}/:releaseId/${action}`,
      { schema: { summary: SUMMARIES[action], params: releaseParams, response: { 200: releaseSchema, ...adminErrors } } },
      async (request) => {
        const { projectKey, envKey, slug, releaseId } = request.params;
        return releases.view(await releases.act(projectKey, envKey, slug, releaseId, action, request.actor));
      },
    );
  }

  app.post(
    TEMPLATES,
    { schema: { summary: 'Create a release template', params: projectParams, body: createTemplateBody, response: { 201: templateSchema, ...adminErrors } } },
    async (request, reply) => {
      const body = request.body as { key: string; name: string; steps: ReleaseStep[]; guardrails?: Guardrail[] };
      return reply.code(201).send(templateView(await templates.create(request.params.projectKey, body, request.actor)));
    },
  );

  app.get(
    TEMPLATES,
    {
      schema: {
        summary: "A project's release templates",
        params: projectParams,
        response: { 200: { type: 'object', required: ['templates'], properties: { templates: { type: 'array', items: templateSchema } } }, ...adminErrors },
      },
    },
    async (request) => ({ templates: (await templates.list(request.params.projectKey)).map(templateView) }),
  );

  app.get(
    `${TEMPLATES}/:templateKey`,
    { schema: { summary: 'One release template', params: templateParams, response: { 200: templateSchema, ...adminErrors } } },
    async (request) => templateView(await templates.get(request.params.projectKey, request.params.templateKey)),
  );

  app.patch(
    `${TEMPLATES}/:templateKey`,
    {
      schema: {
        summary: 'Change a release template (absent keeps)',
        params: templateParams,
        body: updateTemplateBody,
        response: { 200: templateSchema, ...adminErrors },
      },
    },
    async (request) => {
      const body = request.body as { name?: string; steps?: ReleaseStep[]; guardrails?: Guardrail[] };
      return templateView(await templates.update(request.params.projectKey, request.params.templateKey, body, request.actor));
    },
  );

  app.delete(
    `${TEMPLATES}/:templateKey`,
    { schema: { summary: 'Delete a release template', params: templateParams, response: { 204: noContent, ...adminErrors } } },
    async (request, reply) => {
      await templates.delete(request.params.projectKey, request.params.templateKey, request.actor);
      return reply.code(204).send();
    },
  );
};
