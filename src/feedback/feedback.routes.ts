import type { FastifyPluginAsync } from 'fastify';
import { readKeyHeaders } from '../flags/index.ts';
import { encodeCursor, pageQueryProperties, readPage } from '../http/paging.ts';
import { type FeedbackInput, feedbackView } from './feedback.ts';
import { feedbackBody } from './feedback.schemas.ts';
import type { FeedbackService } from './feedback.service.ts';

type FeedbackBody = Omit<FeedbackInput, 'description' | 'metadata'> & {
  description?: string | null;
  metadata?: Record<string, unknown> | null;
};

/** POST /v1/flags/preview/feedback, inside the flag interface scope. */
export function feedbackPublicRoutes(feedback: FeedbackService): FastifyPluginAsync {
  return async (app) => {
    app.post<{ Body: FeedbackBody }>(
      '/preview/feedback',
      { schema: { body: feedbackBody }, config: { surface: 'flags' } },
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

type ListParams = { projectKey: string; envKey: string; slug: string };

export const feedbackAdminRoutes: FastifyPluginAsync<{ feedback: FeedbackService }> = async (app, { feedback }) => {
  app.get<{ Params: ListParams; Querystring: { cursor?: string; limit?: string } }>(
    '/projects/:projectKey/environments/:envKey/flags/:slug/feedback',
    { schema: { querystring: { type: 'object', properties: pageQueryProperties } } },
    async (request) => {
      const { projectKey, envKey, slug } = request.params;
      const page = await feedback.list(projectKey, envKey, slug, readPage(request.query));
      return { feedback: page.items.map(feedbackView), nextCursor: encodeCursor(page.next) };
    },
  );
};
