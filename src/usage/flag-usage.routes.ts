import { AppError } from '../errors.ts';
import { adminErrors, type RoutePlugin } from '../http/schemas.ts';
import { projectParams } from '../projects/index.ts';
import { flagParams } from '../flags/index.ts';
import { flagUsageSchema, projectUsageSchema, usageQuery } from './flag-usage.schemas.ts';
import type { FlagUsage } from './flag-usage.service.ts';

export const flagUsageAdminRoutes: RoutePlugin<{ usage: FlagUsage }> = async (app, { usage }) => {
  app.get(
    '/projects/:projectKey/usage',
    {
      schema: {
        summary: "The project's flags with their evaluations over the last days, most evaluated first",
        params: projectParams,
        querystring: usageQuery,
        response: { 200: projectUsageSchema, ...adminErrors },
      },
    },
    async (request) => usage.projectUsage(request.params.projectKey, readDays(request.query.days)),
  );

  app.get(
    '/projects/:projectKey/flags/:slug/usage',
    {
      schema: {
        summary: "A flag's evaluations per environment and day, and when it was last evaluated",
        params: flagParams,
        querystring: usageQuery,
        response: { 200: flagUsageSchema, ...adminErrors },
      },
    },
    async (request) => {
      const { projectKey, slug } = request.params;
      const days = readDays(request.query.days);
      return usage.flagSeries(projectKey, slug, days);
    },
  );
};

/** `days`: 1 to 366, 30 when absent. */
function readDays(text: string | undefined): number {
  if (text === undefined) return 30;
  const days = Number(text);
  if (days < 1 || days > 366) throw AppError.validation([{ field: 'querystring.days', reason: 'must be a whole number from 1 to 366' }]);
  return days;
}
