import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import Fastify, { type FastifyInstance, type FastifySerializerCompiler, type FastifyServerOptions } from 'fastify';
import { apiKeyAdminRoutes } from './api-keys/index.ts';
import { webhookAdminRoutes } from './webhooks/index.ts';
import { auditAdminRoutes } from './audit/index.ts';
import { changeAdminRoutes } from './changes/index.ts';
import { codeRefAdminRoutes, codeRefPublicRoutes } from './code-refs/index.ts';
import type { Services } from './compose.ts';
import { registerDashboard } from './dashboard/index.ts';
import { experimentAdminRoutes, trackRoutes } from './experiments/index.ts';
import { releaseAdminRoutes } from './releases/index.ts';
import { feedbackAdminRoutes, feedbackPublicRoutes } from './feedback/index.ts';
import { flagdAdminRoutes, projectDocumentRoutes, unleashRoutes } from './documents/index.ts';
import { flagdSyncAdminRoutes } from './flagd-sync/index.ts';
import { answerUnroutableFlagRead, FlagFastPath, flagPublicRoutes, ofrepRoutes } from './evaluation/index.ts';
import { flagUsageAdminRoutes } from './usage/index.ts';
import { flagAdminRoutes, playgroundRoutes } from './flags/index.ts';
import { formAdminRoutes, formReadTokenRoutes } from './forms/index.ts';
import fastifyCookie from '@fastify/cookie';
import { registerAdminAuth } from './http/admin-auth.ts';
import { identityRoutes } from './identity/index.ts';
import { bodyGuard } from './http/body-guard.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { clientErrorHandler, frameworkErrors } from './http/framework-errors.ts';
import { registerOpenApi } from './http/openapi.ts';
import { registerHealth } from './http/health.ts';
import { createRateLimiter, registerRateLimit } from './http/rate-limit.ts';
import { bodyDeadline } from './http/request-deadline.ts';
import { requestIdOf } from './http/request-id.ts';
import { trustProxyOf } from './http/trust-proxy.ts';
import { FastPathMetrics, registerHttpMetrics } from './http/http-metrics.ts';
import { registerEvaluationEvents } from './tracing/evaluation-events.ts';
import { OneLinePerRequest } from './http/request-log.ts';
import { lazyValidatorBuilder } from './http/lazy-validators.ts';
import { projectAdminRoutes } from './projects/index.ts';
import { segmentAdminRoutes } from './segments/index.ts';
import {
  formAnalyticsAdminRoutes,
  formspreeRoutes,
  formViewRoutes,
  submissionAdminRoutes,
  submissionDeliveryRoutes,
  submissionIntakeRoutes,
  UploadSlots,
} from './submissions/index.ts';

export interface BuildAppOptions {
  /** Replaces the services' logger (tests pass false). */
  logger?: FastifyServerOptions['logger'];
  /**
   * Turns the response schema of a route into its serializer. By default answers are plain
   * JSON.stringify: the schemas describe them (types, OpenAPI) but never reshape them. Tests pass one
   * that also checks every answer against its schema.
   */
  serializerCompiler?: FastifySerializerCompiler<unknown>;
}

/** The whole HTTP surface as a Fastify instance, without listening (tests build it too). */
export async function buildApp(services: Services, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const { config } = services;
  // One per-IP counter for the routes and the fast path (contract D20).
  const limiter = await createRateLimiter(config, services.log, services.worker);
  // Warm flag GETs are answered before Fastify routing; see src/evaluation/flag.fast-path.ts and docs/performance.md.
  const trustProxy = trustProxyOf(config.trustProxy);
  const fastPath = new FlagFastPath(services.reads, limiter, trustProxy, { streams: services.streams, tokens: services.streamTokens });
  const app = Fastify({
    // While tracing, every read goes through Fastify, where it gets its span and evaluation events.
    serverFactory: config.flagFastPath && !services.tracing ? fastPath.serverFactory : undefined,
    ...(options.logger === undefined ? { loggerInstance: services.log } : { logger: options.logger }),
    logController: new OneLinePerRequest(),
    genReqId: requestIdOf,
    bodyLimit: config.bodyLimit,
    // Slow and idle clients (issue 8): a request must arrive whole within requestTimeout, a connection
    // that sends nothing is closed after connectionTimeout; Node checks the first every second.
    requestTimeout: config.connections.requestTimeoutMs,
    connectionTimeout: config.connections.idleTimeoutMs,
    http: { connectionsCheckingInterval: Math.min(1000, config.connections.requestTimeoutMs) },
    trustProxy,
    routerOptions: { maxParamLength: 2048 },
    frameworkErrors: frameworkErrors([answerUnroutableFlagRead]),
    clientErrorHandler,
    ajv: {
      // Wrong types are errors, not coerced (contract D10); unknown fields are kept unless a schema forbids them.
      // Union types (`type: ['object', 'null']`, variant values of several types) are meant: Ajv's strict
      // mode would log a warning for each such schema as it compiles it.
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, allowUnionTypes: true },
    },
    // Each route's request schema is compiled on its first request, not at start (issue 19).
    schemaController: { compilersFactory: { buildValidator: lazyValidatorBuilder() } },
    // While closing, requests already on open connections are still answered normally; Fastify's own
    // 503 body would not be the specification's error object (contract D8).
    return503OnClosing: false,
  }) as unknown as FastifyInstance;
  app.server.maxConnections = config.connections.max;
  app.setSerializerCompiler(options.serializerCompiler ?? (() => (data) => JSON.stringify(data)));
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerErrorHandling(app);
  if (services.metrics) {
    // Only when metrics are on: the hot path pays nothing otherwise.
    registerHttpMetrics(app, services.metrics);
    fastPath.observe = new FastPathMetrics(services.metrics).answered;
  }
  app.addHook('onRequest', bodyDeadline(config.connections.requestTimeoutMs));
  app.addHook('preValidation', bodyGuard);
  // Before any route: the plugin hooks every route registered after it (contract D20).
  await registerRateLimit(app, limiter);
  if (config.flagFastPath && !services.tracing) fastPath.attach(app);
  if (services.tracing) {
    await services.tracing.register(app);
    registerEvaluationEvents(app);
  }

  await registerOpenApi(app);

  await registerHealth(app, services.readiness);

  await app.register(flagPublicRoutes, {
    prefix: '/v1/flags',
    reads: services.reads,
    plugins: [feedbackPublicRoutes(services.feedback), codeRefPublicRoutes(services.codeRefs, services.apiKeys)],
  });

  await app.register(ofrepRoutes, { prefix: '/ofrep/v1', reads: services.reads, streams: services.streams, tokens: services.streamTokens });
  // Open event streams never end by themselves: they are closed so that the server can.
  app.addHook('preClose', async () => services.streams.closeAll());

  await app.register(trackRoutes, { prefix: '/v1/track', events: services.trackedEvents });

  const intake = {
    forms: services.forms,
    submissions: services.submissionIntake,
    limits: config.forms,
    bodyLimit: config.bodyLimit,
    publicUrl: config.publicUrl,
    resultPageKey: services.resultPageKey,
    mailEnabled: config.smtpUrl !== undefined,
    // One bound on uploads under way for both submission endpoints.
    slots: new UploadSlots(config.forms),
  };
  await app.register(submissionIntakeRoutes, { prefix: '/v1/s', ...intake });
  await app.register(formViewRoutes, { prefix: '/v1/s', forms: services.forms, analytics: services.formAnalytics });
  // The Formspree drop-in (issue 34): Formspree's client libraries with their endpoint set to <public URL>/formspree.
  await app.register(formspreeRoutes, { prefix: '/formspree', ...intake });

  await app.register(
    async (scope) => {
      const admin = scope.withTypeProvider<JsonSchemaToTsProvider>();
      // The admin API reads JSON only: a text/plain body is a 415 (docs/errors.md), not a schema error.
      admin.removeContentTypeParser('text/plain');
      admin.addHook('onRoute', (route) => {
        route.config = { surface: 'admin', ...route.config };
        route.schema = { tags: ['admin'], security: [{ adminToken: [] }, { dashboardSession: [] }], ...route.schema };
      });
      // The dashboard's session cookie is parsed in the admin scope only; the flag interface never reads cookies.
      await admin.register(fastifyCookie);
      registerAdminAuth(admin, services.identity.gate);
      await admin.register(identityRoutes, { identity: services.identity, publicUrl: config.publicUrl });
      await admin.register(projectAdminRoutes, { projects: services.projects });
      await admin.register(apiKeyAdminRoutes, { apiKeys: services.apiKeys });
      await admin.register(webhookAdminRoutes, { webhooks: services.webhooks });
      await admin.register(flagAdminRoutes, { flags: services.flags, changeRequests: services.promotion });
      await admin.register(flagUsageAdminRoutes, { usage: services.usage });
      await admin.register(segmentAdminRoutes, { segments: services.segments });
      await admin.register(changeAdminRoutes, {
        requests: services.changeRequests,
        reviews: services.changeReviews,
        views: services.changeViews,
        applier: services.changeApplier,
        promotion: services.promotion,
      });
      await admin.register(flagdAdminRoutes, { flagd: services.flagd });
      await admin.register(playgroundRoutes, { playground: services.playground });
      await admin.register(projectDocumentRoutes, { documents: services.documents });
      await admin.register(unleashRoutes, { unleash: services.unleash });
      await admin.register(flagdSyncAdminRoutes, { flagdSync: services.flagdSync });
      await admin.register(feedbackAdminRoutes, { feedback: services.feedback });
      await admin.register(codeRefAdminRoutes, { codeRefs: services.codeRefs });
      await admin.register(formAdminRoutes, {
        forms: services.forms,
        publicUrl: config.publicUrl,
        submissionCounts: services.submissions,
      });
      await admin.register(formReadTokenRoutes, { readTokens: services.formReadTokens });
      await admin.register(submissionAdminRoutes, {
        submissions: services.submissions,
        exports: services.submissionExports,
        personalData: services.personalData,
      });
      await admin.register(submissionDeliveryRoutes, { deliveries: services.submissionDeliveries });
      await admin.register(formAnalyticsAdminRoutes, { analytics: services.formAnalytics });
      await admin.register(auditAdminRoutes, { audit: services.audit });
      await admin.register(experimentAdminRoutes, {
        metrics: services.experimentMetrics,
        experiments: services.experiments,
        results: services.experimentResults,
      });
      await admin.register(releaseAdminRoutes, { releases: services.releases, templates: services.releaseTemplates });
    },
    { prefix: '/admin/v1' },
  );

  if (!(await registerDashboard(app, { dir: config.dashboardDir }))) {
    app.log.warn({ dir: config.dashboardDir }, 'the dashboard is not built (npm run build): it is not served');
  }

  return app;
}
