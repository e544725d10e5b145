import { useQuery } from '@tanstack/react-query';
import { api, type Form, type FormAnalytics } from '../api.ts';
import { CopyButton, ErrorMessage, Loading, Section, Switch } from '../ui/index.ts';
import { useCanWrite } from '../session.ts';
import { usePatchForm } from './form-drafts.ts';

// Issue 34: a form's submissions, spam and delivery failures per day over 30 days (and views, where the
// site counts them), drawn as the experiments' users-over-time chart is: one line per series.

type Series = 'submissions' | 'spam' | 'deliveryFailures' | 'views';
const NAMES: Record<Series, string> = { submissions: 'Submissions', spam: 'Spam', deliveryFailures: 'Delivery failures', views: 'Views' };

export function AnalyticsSection({ form }: { form: Form }) {
  const canWrite = useCanWrite();
  const analytics = useQuery({
    queryKey: ['form-analytics', form.key],
    queryFn: () => api<FormAnalytics>('GET', `/forms/${encodeURIComponent(form.key)}/analytics?days=30`),
  });
  const views = form.analytics?.views === true;
  const save = usePatchForm(form, views ? 'Stopped counting page views' : 'Counting page views');
  const snippet = `<script>fetch('${form.endpoint}/view', { mode: 'cors', keepalive: true });</script>`;
  return (
    <Section title="Last 30 days">
      {analytics.isPending && <Loading what="the analytics" />}
      <ErrorMessage error={analytics.error} />
      {analytics.data && <AnalyticsView analytics={analytics.data} />}
      <Switch
        label="Count page views"
        checked={views}
        onChange={(on) => save.mutate({ analytics: on ? { views: true } : null })}
        disabled={!canWrite || save.isPending}
        hint="For the conversion rate: the form's page calls the view counter once per view (a count per day, no personal data)"
      />
      <ErrorMessage error={save.error} />
      {views && (
        <>
          <pre tabIndex={0}>
            <code>{snippet}</code>
          </pre>
          <CopyButton text={snippet} label="Copy view counter snippet" />
        </>
      )}
    </Section>
  );
}

function AnalyticsView({ analytics }: { analytics: FormAnalytics }) {
  const { totals, days } = analytics;
  // Views only when the site counts them: otherwise a flat line at zero says nothing.
  const series: Series[] = totals.views > 0 ? ['submissions', 'spam', 'deliveryFailures', 'views'] : ['submissions', 'spam', 'deliveryFailures'];
  return (
    <>
      <dl className="totals">
        {series.map((s) => (
          <div key={s} className="pair">
            <dt>{NAMES[s]}</dt>
            <dd>{totals[s].toLocaleString()}</dd>
          </div>
        ))}
        {totals.conversionRate !== null && (
          <div className="pair">
            <dt>Conversion</dt>
            <dd>{(totals.conversionRate * 100).toFixed(1)} %</dd>
          </div>
        )}
      </dl>
      {days.length > 1 && <DaysChart days={days} series={series} />}
    </>
  );
}

/** One line per series over the days, on one scale. */
function DaysChart({ days, series }: { days: FormAnalytics['days']; series: Series[] }) {
  const max = Math.max(1, ...days.flatMap((d) => series.map((s) => d[s])));
  const width = 300;
  const height = 100;
  const x = (i: number) => (i / (days.length - 1)) * width;
  const y = (n: number) => height - (n / max) * height;
  const label = `${series.map((s) => NAMES[s].toLowerCase()).join(', ')} per day from ${days[0]!.date} to ${days[days.length - 1]!.date}`;
  return (
    <figure className="users-chart">
      <svg viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" role="img" aria-label={label}>
        {series.map((s, i) => (
          <polyline key={s} className={`series s${i % 4}`} fill="none" points={days.map((d, j) => `${x(j)},${y(d[s])}`).join(' ')} />
        ))}
      </svg>
      <figcaption>
        {series.map((s, i) => (
          <span key={s} className={`legend s${i % 4}`}>
            {NAMES[s]}
          </span>
        ))}{' '}
        <small className="muted">
          {days[0]!.date} to {days[days.length - 1]!.date} (UTC), up to {max.toLocaleString()} a day
        </small>
      </figcaption>
    </figure>
  );
}
