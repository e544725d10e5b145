import { AppError, message } from '../errors.ts';
import type { FormService } from '../forms/index.ts';
import { adminErrors, publicErrors, type RoutePlugin } from '../http/schemas.ts';
import { ANALYTICS_DEFAULT_DAYS, ANALYTICS_MAX_DAYS, countsViews, type FormAnalyticsService } from './form-analytics.service.ts';
import { formKeyParams } from './submission.schemas.ts';
import { allowOrigin, preflightForm } from './submission-intake.routes.ts';

const counts = {
  submissions: { type: 'integer', description: 'Submissions that are not spam' },
  spam: { type: 'integer' },
  deliveryFailures: { type: 'integer', description: 'Deliveries queued that day that ended failed' },
  views: { type: 'integer', description: 'Views counted by GET /v1/s/{formKey}/view (0 unless the form counts them)' },
} as const;

const analyticsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['days', 'totals'],
  properties: {
    days: {
      type: 'array',
      description: 'One entry per UTC day, oldest first, today last; days without any are zeros',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['date', 'submissions', 'spam', 'deliveryFailures', 'views'],
        properties: { date: { type: 'string', description: 'YYYY-MM-DD (UTC)' }, ...counts },
      },
    },
    totals: {
      type: 'object',
      additionalProperties: false,
      required: ['submissions', 'spam', 'deliveryFailures', 'views', 'conversionRate'],
      properties: { ...counts, conversionRate: { type: ['number', 'null'], description: 'submissions / views; null without views' } },
    },
  },
} as const;

/** GET /admin/v1/forms/{formKey}/analytics (issue 34). */
export const formAnalyticsAdminRoutes: RoutePlugin<{ analytics: FormAnalyticsService }> = async (app, { analytics }) => {
  app.get(
    '/forms/:formKey/analytics',
    {
      schema: {
        summary: "A form's submissions, spam, failed deliveries and views per UTC day, with totals and the conversion rate",
        params: formKeyParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            days: {
              type: 'string',
              maxLength: 3,
              description: `Days to cover, today included: 1 to ${ANALYTICS_MAX_DAYS} (default ${ANALYTICS_DEFAULT_DAYS})`,
            },
          },
        },
        response: { 200: analyticsSchema, ...adminErrors },
      },
    },
    async (request) => {
      const text = request.query.days;
      const days = text === undefined ? ANALYTICS_DEFAULT_DAYS : /^\d+$/.test(text) ? Number(text) : NaN;
      if (!(days >= 1 && days <= ANALYTICS_MAX_DAYS))
        throw AppError.validation([{ field: 'querystring.days', reason: `must be a whole number from 1 to ${ANALYTICS_MAX_DAYS}` }]);
      return analytics.analytics(request.params.formKey, days);
    },
  );
};

/**
 * GET /v1/s/{formKey}/view (issue 34): a page counts a view of its form, for the conversion rate. Public
 * and rate limited as the submit endpoint is (surface `forms`), CORS for the form's websites. Nothing of
 * the request is kept: one count per form and UTC day. A form that does not count views (analytics.views
 * off, or disabled) answers 404, so that a page's author learns the counter is off.
 */
export const formViewRoutes: RoutePlugin<{ forms: FormService; analytics: FormAnalyticsService }> = async (app, { forms, analytics }) => {
  app.get(
    '/:formKey/view',
    {
      config: { surface: 'forms' },
      schema: {
        summary: "Count a view of the form's page (no personal data; only when the form's analytics.views is on)",
        params: formKeyParams,
        response: { 204: { description: 'Counted' }, ...publicErrors },
      },
    },
    async (request, reply) => {
      const formKey = request.params.formKey;
      const form = await preflightForm(forms, formKey);
      allowOrigin(request, reply, form?.websites ?? []);
      reply.header('cache-control', 'no-store');
      if (!form) throw new AppError('not_found', message('formNotFound', { formKey: formKey.slice(0, 100) }));
      if (!countsViews(form)) throw new AppError('not_found', message('formViewsOff', { formKey }));
      await analytics.countView(form);
      return reply.code(204).send();
    },
  );
};
