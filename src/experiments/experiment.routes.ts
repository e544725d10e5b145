import { adminErrors, noContent, type RoutePlugin } from '../http/schemas.ts';
import { bypassRequested, projectParams, protectionQuery } from '../projects/index.ts';
import {
  createExperimentBody,
  createMetricBody,
  experimentListParams,
  experimentParams,
  experimentSchema,
  metricParams,
  metricSchema,
  resultsSchema,
  updateExperimentBody,
  updateMetricBody,
} from './experiment.schemas.ts';
import type { ExperimentService } from './experiment.service.ts';
import { experimentView } from './experiment.ts';
import type { MetricService } from './metric.service.ts';
import { resultsCsv } from './results.ts';
import type { ResultsService } from './results.service.ts';
import { metricView } from './metric.ts';

export interface ExperimentRouteDeps {
  metrics: MetricService;
  experiments: ExperimentService;
  results: ResultsService;
}

const EXPERIMENTS = '/projects/:projectKey/environments/:envKey/experiments';

/**
 * Metrics per project and experiments per environment (issue 32): viewers read, editors write (the
 * default access of admin routes). Experiments' writes are changes of their environment: a protected
 * one refuses them unless an owner bypasses (?bypassProtection=true).
 */
export const experimentAdminRoutes: RoutePlugin<ExperimentRouteDeps> = async (app, { metrics, experiments, results }) => {
  app.post(
    '/projects/:projectKey/metrics',
    { schema: { summary: 'Create a metric', params: projectParams, body: createMetricBody, response: { 201: metricSchema, ...adminErrors } } },
    async (request, reply) => reply.code(201).send(metricView(await metrics.create(request.params.projectKey, request.body, request.actor))),
  );

  app.get(
    '/projects/:projectKey/metrics',
    {
      schema: {
        summary: "A project's metrics",
        params: projectParams,
        response: { 200: { type: 'object', required: ['metrics'], properties: { metrics: { type: 'array', items: metricSchema } } }, ...adminErrors },
      },
    },
    async (request) => ({ metrics: (await metrics.list(request.params.projectKey)).map(metricView) }),
  );

  app.get(
    '/projects/:projectKey/metrics/:metricKey',
    { schema: { summary: 'One metric', params: metricParams, response: { 200: metricSchema, ...adminErrors } } },
    async (request) => metricView(await metrics.get(request.params.projectKey, request.params.metricKey)),
  );

  app.patch(
    '/projects/:projectKey/metrics/:metricKey',
    { schema: { summary: 'Change a metric (absent keeps)', params: metricParams, body: updateMetricBody, response: { 200: metricSchema, ...adminErrors } } },
    async (request) => metricView(await metrics.update(request.params.projectKey, request.params.metricKey, request.body, request.actor)),
  );

  app.delete(
    '/projects/:projectKey/metrics/:metricKey',
    { schema: { summary: 'Delete a metric (409 while a running experiment uses it)', params: metricParams, response: { 204: noContent, ...adminErrors } } },
    async (request, reply) => {
      await metrics.delete(request.params.projectKey, request.params.metricKey, request.actor);
      return reply.code(204).send();
    },
  );

  app.post(
    EXPERIMENTS,
    {
      schema: {
        summary: 'Create a draft experiment on the split of a flag',
        params: experimentListParams,
        querystring: protectionQuery,
        body: createExperimentBody,
        response: { 201: experimentSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { projectKey, envKey } = request.params;
      const bypassProtection = bypassRequested(request.query, request.role);
      return reply.code(201).send(experimentView(await experiments.create(projectKey, envKey, request.body, request.actor, { bypassProtection })));
    },
  );

  app.get(
    EXPERIMENTS,
    {
      schema: {
        summary: "An environment's experiments",
        params: experimentListParams,
        response: {
          200: { type: 'object', required: ['experiments'], properties: { experiments: { type: 'array', items: experimentSchema } } },
          ...adminErrors,
        },
      },
    },
    async (request) => ({ experiments: (await experiments.list(request.params.projectKey, request.params.envKey)).map(experimentView) }),
  );

  app.get(
    `${EXPERIMENTS}/:experimentKey`,
    { schema: { summary: 'One experiment', params: experimentParams, response: { 200: experimentSchema, ...adminErrors } } },
    async (request) => {
      const { projectKey, envKey, experimentKey } = request.params;
      return experimentView(await experiments.find(projectKey, envKey, experimentKey));
    },
  );

  app.patch(
    `${EXPERIMENTS}/:experimentKey`,
    {
      schema: {
        summary: 'Change an experiment (absent keeps; flag, rule and control only in a draft)',
        params: experimentParams,
        querystring: protectionQuery,
        body: updateExperimentBody,
        response: { 200: experimentSchema, ...adminErrors },
      },
    },
    async (request) => {
      const { projectKey, envKey, experimentKey } = request.params;
      const bypassProtection = bypassRequested(request.query, request.role);
      return experimentView(await experiments.update(projectKey, envKey, experimentKey, request.body, request.actor, { bypassProtection }));
    },
  );

  app.delete(
    `${EXPERIMENTS}/:experimentKey`,
    {
      schema: {
        summary: 'Delete a draft or stopped experiment',
        params: experimentParams,
        querystring: protectionQuery,
        response: { 204: noContent, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { projectKey, envKey, experimentKey } = request.params;
      await experiments.delete(projectKey, envKey, experimentKey, request.actor, { bypassProtection: bypassRequested(request.query, request.role) });
      return reply.code(204).send();
    },
  );

  for (const action of ['start', 'stop'] as const) {
    app.post(
      `${EXPERIMENTS}/:experimentKey/${action}`,
      {
        schema: {
          summary: action === 'start' ? 'Start a draft experiment (409 on a flag without a split)' : 'Stop a running experiment',
          params: experimentParams,
          querystring: protectionQuery,
          response: { 200: experimentSchema, ...adminErrors },
        },
      },
      async (request) => {
        const { projectKey, envKey, experimentKey } = request.params;
        const bypassProtection = bypassRequested(request.query, request.role);
        return experimentView(await experiments[action](projectKey, envKey, experimentKey, request.actor, { bypassProtection }));
      },
    );
  }

  app.get(
    `${EXPERIMENTS}/:experimentKey/results`,
    {
      schema: {
        summary: 'Results computed from the stored events: users, sample-ratio check, and per metric each variant against the control',
        params: experimentParams,
        response: { 200: resultsSchema, ...adminErrors },
      },
    },
    async (request) => {
      const { projectKey, envKey, experimentKey } = request.params;
      return results.results(projectKey, envKey, experimentKey);
    },
  );

  app.get(
    `${EXPERIMENTS}/:experimentKey/results.csv`,
    {
      schema: {
        summary: 'The same results as CSV: one row per metric and variant',
        params: experimentParams,
        response: { 200: { description: 'text/csv' }, ...adminErrors },
      },
    },
    async (request, reply) => {
      const { projectKey, envKey, experimentKey } = request.params;
      const csv = resultsCsv(await results.results(projectKey, envKey, experimentKey));
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${experimentKey}-results.csv"`)
        .header('cache-control', 'no-store')
        .send(csv);
    },
  );
};
