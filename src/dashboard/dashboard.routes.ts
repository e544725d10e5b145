import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

export interface DashboardDeps {
  /** The built dashboard: index.html and assets/ (dashboard/build.ts). */
  dir: string;
}

/**
 * A strict policy for every dashboard answer (issue 9): scripts and styles only from Flagpost's own
 * origin (no inline script, no eval), no framing, no plugins, forms and fetches only to itself.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The client-side routes of the single-page app: each answers index.html, so that any screen can be linked. */
const APP_ROUTES = ['/', '/sign-in', '/accept-invitation', '/members', '/account', '/audit', '/design', '/projects', '/projects/*', '/forms', '/forms/*'];

function securityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', DASHBOARD_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-frame-options', 'DENY');
  reply.header('cross-origin-opener-policy', 'same-origin');
}

/**
 * Serves the dashboard at `/` from the same process (issue 9). Assets have content-hashed names and
 * are cached for a year; index.html is revalidated on every load, so a new version shows at once.
 * Returns false (and serves nothing) when the dashboard has not been built.
 */
export async function registerDashboard(app: FastifyInstance, { dir }: DashboardDeps): Promise<boolean> {
  const indexFile = path.join(dir, 'index.html');
  if (!fs.existsSync(indexFile)) return false;
  const index = fs.readFileSync(indexFile);

  await app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply) => securityHeaders(reply));
    await scope.register(fastifyStatic, {
      root: path.join(dir, 'assets'),
      prefix: '/assets/',
      index: false,
      // Names carry a hash of their content (dashboard/build.ts): a changed file is a new URL.
      immutable: true,
      maxAge: '365d',
      // dashboard/build.ts writes .br and .gz beside each asset; the one the client accepts is sent.
      preCompressed: true,
    });
    for (const url of APP_ROUTES) {
      scope.get(url, { schema: { hide: true } }, (_request, reply) =>
        reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-cache').send(index),
      );
    }
  });
  return true;
}
