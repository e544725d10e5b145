import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';

/**
 * Collects the route schemas into an OpenAPI 3.1 document, served at GET /openapi.json. Call before
 * the routes are registered. test/openapi.test.ts validates the document and checks it against the
 * endpoints docs/api.md lists.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Flagpost',
        version: '1',
        description: 'Feature flags and a form backend. The flag interface is the one of Basestack Flags; see docs/api.md.',
      },
      components: {
        securitySchemes: {
          adminToken: { type: 'http', scheme: 'bearer', description: 'The admin token (FLAGPOST_ADMIN_TOKEN or the one printed on first start)' },
          dashboardSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'flagpost_session',
            description: 'The session cookie of a dashboard sign-in (`__Host-flagpost_session` over https); writes need a same-origin Origin header',
          },
        },
      },
    },
    // Fastify adds a HEAD route to every GET; they answer alike and are left out of the document.
    exposeHeadRoutes: false,
    // A prefix's root route answers with and without the trailing slash; the document names it without.
    transform: ({ schema, url }) => ({ schema, url: url.length > 1 ? url.replace(/\/$/, '') : url }),
  });
  app.get(
    '/openapi.json',
    { schema: { summary: 'This OpenAPI 3.1 document', response: { 200: { type: 'object', additionalProperties: true, description: 'OpenAPI 3.1' } } } },
    async (_request, reply) => reply.header('cache-control', 'no-cache').send(app.swagger() as unknown as Record<string, unknown>),
  );
}
