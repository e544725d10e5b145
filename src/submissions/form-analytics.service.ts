import type { Db } from '../db/database.ts';
import { isForeignKeyViolation } from '../db/codec.ts';
import { AppError, message } from '../errors.ts';
import type { Form, FormService } from '../forms/index.ts';
import type { DayCounts, FormAnalyticsStore } from './form-analytics.store.ts';

export interface FormAnalyticsDeps {
  db: Db;
  store: FormAnalyticsStore;
  forms: Pick<FormService, 'get'>;
  clock: () => Date;
}

/** Days an analytics answer covers by default, and at most. */
export const ANALYTICS_DEFAULT_DAYS = 30;
export const ANALYTICS_MAX_DAYS = 365;

const DAY_MS = 86_400_000;
const utcDay = (time: number): string => new Date(time).toISOString().slice(0, 10);

/** Whether a form counts its views (GET /v1/s/{formKey}/view): an enabled form whose analytics say so. */
export const countsViews = (form: Form): boolean => form.enabled && form.analytics?.views === true;

/**
 * A form's analytics (issue 34): submissions (not spam), spam, failed deliveries and views per UTC day,
 * and the view counter. Views are a count per form and day, nothing about who viewed.
 */
export class FormAnalyticsService {
  constructor(private readonly deps: FormAnalyticsDeps) {}

  /** The last `days` UTC days, today included, oldest first, every day present (zeros filled), with totals. */
  async analytics(formKey: string, days: number) {
    const form = await this.deps.forms.get(formKey);
    const today = Date.parse(`${utcDay(this.deps.clock().getTime())}T00:00:00.000Z`);
    const first = utcDay(today - (days - 1) * DAY_MS);
    const counts = await this.deps.store.countsSince(this.deps.db, form.id, first);
    const series: Array<{ date: string } & DayCounts> = [];
    const totals: DayCounts = { submissions: 0, spam: 0, deliveryFailures: 0, views: 0 };
    for (let i = days - 1; i >= 0; i--) {
      const date = utcDay(today - i * DAY_MS);
      const day = counts.get(date) ?? { submissions: 0, spam: 0, deliveryFailures: 0, views: 0 };
      series.push({ date, submissions: day.submissions, spam: day.spam, deliveryFailures: day.deliveryFailures, views: day.views });
      for (const key of ['submissions', 'spam', 'deliveryFailures', 'views'] as const) totals[key] += day[key];
    }
    return { days: series, totals: { ...totals, conversionRate: totals.views > 0 ? totals.submissions / totals.views : null } };
  }

  /** Counts a view of `form` today; the caller checked countsViews. A form deleted meanwhile is the form interface's 404. */
  async countView(form: Form): Promise<void> {
    try {
      await this.deps.store.addView(this.deps.db, form.id, utcDay(this.deps.clock().getTime()));
    } catch (error) {
      if (isForeignKeyViolation(error)) throw new AppError('not_found', message('formNotFound', { formKey: form.key }));
      throw error;
    }
  }
}
