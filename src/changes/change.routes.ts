import { AppError } from '../errors.ts';
import { adminErrors, type RoutePlugin } from '../http/schemas.ts';
import { environmentParams, projectParams } from '../projects/index.ts';
import { type ChangeStatus, OPEN_STATUSES } from './change.ts';
import type { ChangeApplier } from './change-apply.service.ts';
import type { ChangeRequestService } from './change-request.service.ts';
import type { ChangeRequestView, ChangeRequestViews } from './change-request.views.ts';
import type { ChangeReviewService } from './change-review.service.ts';
import type { Actor } from '../audit/index.ts';
import {
  changeOutcomeSchema,
  changeRequestParams,
  changeRequestSchema,
  changeRequestSummarySchema,
  approveBody,
  commentBody,
  compareQuery,
  comparisonSchema,
  createChangeRequestBody,
  editChangeRequestBody,
  listChangeRequestsQuery,
  promoteBody,
  revertBody,
  scheduleBody,
} from './change.schemas.ts';
import type { PromotionService } from './promotion.service.ts';

export interface ChangeRouteDeps {
  requests: ChangeRequestService;
  reviews: ChangeReviewService;
  views: ChangeRequestViews;
  applier: ChangeApplier;
  promotion: PromotionService;
}

const flagParams = {
  type: 'object',
  required: ['projectKey', 'envKey', 'slug'],
  properties: { ...environmentParams.properties, slug: { type: 'string' } },
} as const;

/** Change requests, scheduled changes, compare and promote, revert (issue 24). Viewers read; editors propose, approve and apply. */
export const changeAdminRoutes: RoutePlugin<ChangeRouteDeps> = async (app, { requests, reviews, views, applier, promotion }) => {
  app.get(
    '/projects/:projectKey/change-requests',
    {
      schema: {
        summary: "A project's change requests, newest first: open ones (with scheduled ones) unless `status` says otherwise",
        params: projectParams,
        querystring: listChangeRequestsQuery,
        response: {
          200: {
            type: 'object',
            additionalProperties: false,
            required: ['changeRequests'],
            properties: { changeRequests: { type: 'array', items: changeRequestSummarySchema } },
          },
          ...adminErrors,
        },
      },
    },
    async (request) => {
      const { status = 'open', limit } = request.query;
      const statuses: readonly ChangeStatus[] = status === 'open' ? OPEN_STATUSES : status === 'all' ? [] : (status.split(',') as ChangeStatus[]);
      const count = Math.min(500, Math.max(1, Number(limit ?? 100)));
      return { changeRequests: await views.list(request.params.projectKey, statuses, count, request.role) };
    },
  );

  app.post(
    '/projects/:projectKey/change-requests',
    {
      schema: {
        summary: "Propose changes to flags of one environment and to the project's segments, based on their current versions",
        params: projectParams,
        body: createChangeRequestBody,
        response: { 201: changeRequestSchema, ...adminErrors },
      },
    },
    async (request, reply) => reply.code(201).send(await requests.create(request.params.projectKey, request.body, request.actor)),
  );

  app.get(
    '/projects/:projectKey/change-requests/:id',
    {
      schema: {
        summary: 'A change request: its changes with their differences, approvals and comments',
        params: changeRequestParams,
        response: { 200: changeRequestSchema, ...adminErrors },
      },
    },
    async (request) => views.view(request.params.projectKey, request.params.id, request.role),
  );

  app.patch(
    '/projects/:projectKey/change-requests/:id',
    {
      schema: {
        summary: 'Edit a change request; changing its changes resets its approvals',
        params: changeRequestParams,
        body: editChangeRequestBody,
        response: { 200: changeRequestSchema, ...adminErrors },
      },
    },
    async (request) => requests.edit(request.params.projectKey, request.params.id, request.body, request.actor),
  );

  app.post(
    '/projects/:projectKey/change-requests/:id/approve',
    {
      schema: {
        summary:
          'Approve the revision of a change request the reviewer saw (409 when it has a newer one): a member other than its author and than whoever wrote a revision since its approvals were last reset, editor or owner',
        params: changeRequestParams,
        body: approveBody,
        response: { 200: changeRequestSchema, ...adminErrors },
      },
    },
    async (request) => reviews.approve(request.params.projectKey, request.params.id, request.body.revision, request.actor, request.member),
  );

  type Run = (projectKey: string, id: string, actor: Actor) => Promise<ChangeRequestView>;
  const actions: Array<[string, string, Run]> = [
    ['submit', 'Submit a draft for review (approved at once where the environment needs no approval)', (p, id, actor) => reviews.submit(p, id, actor)],
    ['reject', 'Reject a change request', (p, id, actor) => reviews.reject(p, id, actor)],
    ['cancel', 'Cancel a change request (a scheduled one never applies)', (p, id, actor) => reviews.cancel(p, id, actor)],
    ['apply', 'Apply an approved change request now, in one transaction; 409 naming a flag changed since', (p, id, actor) => applier.apply(p, id, actor)],
  ];
  for (const [path, summary, run] of actions) {
    app.post(
      `/projects/:projectKey/change-requests/:id/${path}`,
      { schema: { summary, params: changeRequestParams, response: { 200: changeRequestSchema, ...adminErrors } } },
      async (request) => run(request.params.projectKey, request.params.id, request.actor),
    );
  }

  app.post(
    '/projects/:projectKey/change-requests/:id/comments',
    {
      schema: {
        summary: 'Comment on a change request',
        params: changeRequestParams,
        body: commentBody,
        response: { 200: changeRequestSchema, ...adminErrors },
      },
    },
    async (request) => reviews.comment(request.params.projectKey, request.params.id, request.body.body, request.actor),
  );

  app.put(
    '/projects/:projectKey/change-requests/:id/schedule',
    {
      schema: {
        summary: 'Schedule (or move) the application of an approved change request; applied once, by one instance, late if none ran then',
        params: changeRequestParams,
        body: scheduleBody,
        response: { 200: changeRequestSchema, ...adminErrors },
      },
    },
    async (request) => applier.schedule(request.params.projectKey, request.params.id, request.body.at, request.actor),
  );

  app.delete(
    '/projects/:projectKey/change-requests/:id/schedule',
    {
      schema: { summary: 'Take a change request off the schedule', params: changeRequestParams, response: { 200: changeRequestSchema, ...adminErrors } },
    },
    async (request) => applier.unschedule(request.params.projectKey, request.params.id, request.actor),
  );

  app.get(
    '/projects/:projectKey/compare',
    {
      schema: {
        summary: 'Compare two environments flag by flag: identical, different (with each field), or missing',
        params: projectParams,
        querystring: compareQuery,
        response: { 200: comparisonSchema, ...adminErrors },
      },
    },
    async (request) => ({ flags: await promotion.compare(request.params.projectKey, request.query.from, request.query.to) }),
  );

  app.post(
    '/projects/:projectKey/promote',
    {
      schema: {
        summary: 'Give flags of one environment the same configuration in another: one transaction, or a change request where the target is protected',
        params: projectParams,
        body: promoteBody,
        response: { 200: changeOutcomeSchema, ...adminErrors },
      },
    },
    async (request) => promotion.promote(request.params.projectKey, request.body, request.actor),
  );

  app.post(
    '/projects/:projectKey/environments/:envKey/flags/:slug/revert',
    {
      schema: {
        summary: 'Revert one change (auditId) or every change since a time (since) of a flag in an environment, as a new change',
        params: flagParams,
        body: revertBody,
        response: { 200: changeOutcomeSchema, ...adminErrors },
      },
    },
    async (request) => {
      const { auditId, since } = request.body;
      if ((auditId === undefined) === (since === undefined)) throw AppError.validation([{ field: 'body', reason: 'must have either auditId or since' }]);
      return promotion.revert(request.params.projectKey, request.params.envKey, request.params.slug, request.body, request.actor);
    },
  );
};
