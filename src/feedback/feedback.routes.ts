import { readKeyHeaders } from '../evaluation/index.ts';
import { keyHeaders } from '../flags/index.ts';
import { encodeCursor, pageQueryProperties, readPage } from '../http/paging.ts';
import { adminErrors, nextCursor, publicErrors, type RoutePlugin } from '../http/schemas.ts';
import { feedbackView } from './feedback.ts';
import { feedbackBody, feedbackCreatedSchema, feedbackSchema, feedbackSummarySchema } from './feedback.schemas.ts';
import type { FeedbackService } from './feedback.service.ts';

/** POST /v1/flags/preview/feedback, inside the flag interface scope. */
export function feedbackPublicRoutes(feedback: FeedbackService): RoutePlugin {
  return async (app) => {
    app.post(
      '/preview/feedback',
      {
        schema: {
          summary: 'Feedback on a preview flag',
          headers: keyHeaders,
          body: feedbackBody,
          response: { 201: feedbackCreatedSchema, ...publicErrors },
        },
        config: { surface: 'flags' },
      },
      async (request, reply) => {
        const { projectKey, environmentKey } = readKeyHeaders(request);
        const { flagKey, mood, rating, description, metadata } = request.body;
        const stored = await feedback.submit(projectKey, environmentKey, {
          flagKey,
          mood,
          rating,
          description: description ?? undefined,
          metadata: metadata ?? undefined,
        });
        return reply.code(201).header('cache-control', 'no-store').send({ success: true, feedbackId: stored.id });
      },
    );
  };
}

export const feedbackAdminRoutes: RoutePlugin<{ feedback: FeedbackService }> = async (app, { feedback }) => {
  app.get(
    '/projects/:projectKey/environments/:envKey/flags/:slug/feedback',
    {
      schema: {
        summary: "A page of a flag's feedback in one environment, newest first",
        params: {
          type: 'object',
          required: ['projectKey', 'envKey', 'slug'],
          properties: { projectKey: { type: 'string' }, envKey: { type: 'string' }, slug: { type: 'string' } },
        },
        querystring: { type: 'object', properties: pageQueryProperties },
        response: {
          200: {
            type: 'object',
            required: ['feedback', 'nextCursor', 'summary'],
            properties: { feedback: { type: 'array', items: feedbackSchema }, nextCursor, summary: feedbackSummarySchema },
          },
          ...adminErrors,
        },
      },
    },
    async (request) => {
      const { projectKey, envKey, slug } = request.params;
      const page = await feedback.list(projectKey, envKey, slug, readPage(request.query));
      return { feedback: page.items.map(feedbackView), nextCursor: encodeCursor(page.next), summary: page.summary };
    },
  );
};
