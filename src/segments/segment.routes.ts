import { adminErrors, noContent, type RoutePlugin } from '../http/schemas.ts';
import { bypassRequested, projectParams, protectionQuery } from '../projects/index.ts';
import { createSegmentBody, segmentParams, segmentSchema, updateSegmentBody } from './segment.schemas.ts';
import type { SegmentService } from './segment.service.ts';

export const segmentAdminRoutes: RoutePlugin<{ segments: SegmentService }> = async (app, { segments }) => {
  app.get(
    '/projects/:projectKey/segments',
    {
      schema: {
        summary: "List a project's segments (reusable groups of conditions for rules)",
        params: projectParams,
        response: { 200: { type: 'object', required: ['segments'], properties: { segments: { type: 'array', items: segmentSchema } } }, ...adminErrors },
      },
    },
    async (request) => ({ segments: await segments.listSegments(request.params.projectKey) }),
  );

  app.post(
    '/projects/:projectKey/segments',
    { schema: { summary: 'Create a segment', params: projectParams, body: createSegmentBody, response: { 201: segmentSchema, ...adminErrors } } },
    async (request, reply) => {
      const { key, ...values } = request.body;
      return reply.code(201).send(await segments.createSegment(request.params.projectKey, key, values, request.actor));
    },
  );

  app.get(
    '/projects/:projectKey/segments/:segmentKey',
    { schema: { summary: 'Get a segment', params: segmentParams, response: { 200: segmentSchema, ...adminErrors } } },
    async (request) => segments.getSegment(request.params.projectKey, request.params.segmentKey),
  );

  app.patch(
    '/projects/:projectKey/segments/:segmentKey',
    {
      schema: {
        summary: 'Change a segment (absent fields keep their value); every environment of the project uses the change at once',
        params: segmentParams,
        querystring: protectionQuery,
        body: updateSegmentBody,
        response: { 200: segmentSchema, ...adminErrors },
      },
    },
    async (request) =>
      segments.updateSegment(request.params.projectKey, request.params.segmentKey, request.body, request.actor, {
        bypassProtection: bypassRequested(request.query, request.role),
      }),
  );

  app.delete(
    '/projects/:projectKey/segments/:segmentKey',
    {
      schema: {
        summary: 'Delete a segment; 409 while a rule of any flag in any environment uses it',
        params: segmentParams,
        querystring: protectionQuery,
        response: { 204: noContent, ...adminErrors },
      },
    },
    async (request, reply) => {
      await segments.deleteSegment(request.params.projectKey, request.params.segmentKey, request.actor, {
        bypassProtection: bypassRequested(request.query, request.role),
      });
      return reply.code(204).send();
    },
  );
};
