import cors from '@fastify/cors';
import { AppError, message } from '../errors.ts';
import { publicErrors, type RoutePlugin } from '../http/schemas.ts';
import { flagListSchema, flagNotFoundSchema, keyHeaders, notModified, previewListSchema, publicFlagSchema } from '../flags/flag.schemas.ts';
import { readKeyHeaders, sendFlagAnswer } from './flag.cache-headers.ts';
import { type FlagReadModel, flagNotFoundAnswer } from './flag.read-model.ts';

export interface FlagPublicRouteDeps {
  reads: FlagReadModel;
  /** Further route plugins of the flag interface (feedback, code references) that share this scope. */
  plugins: RoutePlugin[];
}

/**
 * The flag interface under /v1/flags: CORS for any origin (contract D7), the key headers checked first
 * on every route (D4), and the three GET endpoints answered from the read model.
 */
export const flagPublicRoutes: RoutePlugin<FlagPublicRouteDeps> = async (app, { reads, plugins }) => {
  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'POST'],
    allowedHeaders: ['Content-Type', 'x-project-key', 'x-environment-key', 'x-api-key'],
    exposedHeaders: ['ETag'],
    maxAge: 86400,
    strictPreflight: false,
  });

  // POST bodies of the flag interface are JSON only; Fastify's text/plain parser would let a string through.
  app.removeContentTypeParser('text/plain');

  // preParsing, not onRequest: the rate limit (contract D20) runs at onRequest and must count refused
  // requests too; preParsing still runs before any of the body is read.
  app.addHook('preParsing', async (request) => {
    if (request.method !== 'OPTIONS') readKeyHeaders(request);
  });

  app.get(
    '/',
    {
      config: { surface: 'flags' },
      schema: { summary: 'Every flag of the environment', headers: keyHeaders, response: { 200: flagListSchema, 304: notModified, ...publicErrors } },
    },
    async (request, reply) => {
      const { projectKey, environmentKey } = readKeyHeaders(request);
      const snapshot = await reads.get(projectKey, environmentKey);
      if (!snapshot) throw environmentMissing(environmentKey);
      reads.usage.all('v1_list', snapshot.environmentId, snapshot.flags, snapshot.v1.listReasons);
      return sendFlagAnswer(request, reply, snapshot.v1.list);
    },
  );

  app.get(
    '/preview',
    {
      config: { surface: 'flags-preview' },
      schema: {
        summary: 'The preview flags of the environment, content as HTML',
        headers: keyHeaders,
        response: { 200: previewListSchema, 304: notModified, ...publicErrors },
      },
    },
    async (request, reply) => {
      const { projectKey, environmentKey } = readKeyHeaders(request);
      const snapshot = await reads.get(projectKey, environmentKey);
      if (!snapshot) throw environmentMissing(environmentKey);
      reads.usage.all('v1_list', snapshot.environmentId, snapshot.v1.previewFlags, snapshot.v1.previewReasons);
      return sendFlagAnswer(request, reply, await reads.preview(snapshot));
    },
  );

  app.get(
    '/:slug',
    {
      config: { surface: 'flags' },
      schema: {
        summary: 'One flag; an unknown slug or unknown keys answer 404 with enabled:false',
        headers: keyHeaders,
        params: { type: 'object', required: ['slug'], properties: { slug: { type: 'string' } } },
        response: { 200: publicFlagSchema, 304: notModified, 404: flagNotFoundSchema, ...publicErrors },
      },
    },
    async (request, reply) => {
      const { projectKey, environmentKey } = readKeyHeaders(request);
      const { slug } = request.params;
      const snapshot = await reads.get(projectKey, environmentKey);
      // Unknown keys answer the normal flag 404 so that clients treat the flag as off (contract D5).
      const found = snapshot?.v1.single.get(slug);
      if (found) reads.usage.one('v1_single', snapshot!.environmentId, slug, found.reason);
      return sendFlagAnswer(request, reply, found ?? flagNotFoundAnswer(slug));
    },
  );

  for (const plugin of plugins) await app.register(plugin);
};

function environmentMissing(environmentKey: string) {
  return new AppError('not_found', message('environmentNotFound', { environmentKey }));
}
