import { useQuery } from '@tanstack/react-query';
import { api } from '../api.ts';
import { Badge, Breadcrumbs, Button, DateText, EmptyState, ErrorMessage, Loading, plural, Section, Table } from '../ui/index.ts';
import {
  type Comparison,
  type Experiment,
  experimentPath,
  formatMean,
  isGood,
  type Metric,
  metricsQuery,
  percent,
  type Results,
  titleCase,
  verdict,
} from './experiments-api.ts';
import { useProject } from './Projects.tsx';

// Issue 32: an experiment's results as a product manager reads them: per metric a row per variant (users,
// mean, lift with its interval drawn around zero, chance to win) and the verdict in words; the sample-ratio
// warning in plain words; users over time.

export function ExperimentResultsScreen({ params }: { params: { key: string; env: string; experiment: string } }) {
  const project = useProject(params.key);
  const path = experimentPath(params.key, params.env, params.experiment);
  const experiment = useQuery({ queryKey: ['experiment', params.key, params.env, params.experiment], queryFn: () => api<Experiment>('GET', path) });
  const results = useQuery({
    queryKey: ['experiment-results', params.key, params.env, params.experiment],
    queryFn: () => api<Results>('GET', `${path}/results`),
    refetchInterval: experiment.data?.status === 'running' ? 30_000 : false,
    // A draft has no results yet (the API answers 409): nothing is counted before the start.
    enabled: experiment.data !== undefined && experiment.data.status !== 'draft',
  });
  const metrics = useQuery(metricsQuery(params.key));
  if (project.isPending || experiment.isPending) return <Loading what="the experiment" />;
  if (project.error || experiment.error) return <ErrorMessage error={project.error ?? experiment.error} />;
  const x = experiment.data;
  const environment = project.data.environments.find((e) => e.key === params.env);
  const byKey = new Map((metrics.data?.metrics ?? []).map((m) => [m.key, m]));
  return (
    <>
      <Breadcrumbs
        items={[
          { label: 'Projects', href: '/projects' },
          { label: project.data.name, href: `/projects/${encodeURIComponent(params.key)}` },
          { label: 'Experiments', href: `/projects/${encodeURIComponent(params.key)}/experiments?env=${encodeURIComponent(params.env)}` },
          { label: x.name },
        ]}
      />
      <h1>
        {x.name} <Badge tone={x.status === 'running' ? 'ok' : x.status === 'stopped' ? 'warn' : 'muted'}>{x.status}</Badge>
      </h1>
      <p className="muted">
        Measures the split of <code>{x.flagKey}</code> in {environment?.name ?? params.env}, against <strong>{x.controlVariant}</strong>
        {x.startedAt && (
          <>
            , since <DateText iso={x.startedAt} />
          </>
        )}
        {x.stoppedAt && (
          <>
            {' '}
            until <DateText iso={x.stoppedAt} />
          </>
        )}
        .
      </p>
      {x.hypothesis && <blockquote>{x.hypothesis}</blockquote>}
      {x.status === 'draft' && (
        <EmptyState title="No user counted yet">
          Start the experiment on the Experiments screen: from then on, every user its split serves is counted.
        </EmptyState>
      )}
      {x.status !== 'draft' && results.isPending && <Loading what="the results" />}
      <ErrorMessage error={results.error} />
      {results.data && (
        <ResultsView
          csvHref={`/admin/v1${path}/results.csv`}
          results={results.data}
          experiment={x}
          metrics={byKey}
          onRefresh={() => results.refetch()}
          refreshing={results.isFetching}
        />
      )}
    </>
  );
}

function ResultsView({
  results,
  experiment,
  metrics,
  onRefresh,
  refreshing,
  csvHref,
}: {
  csvHref: string;
  results: Results;
  experiment: Experiment;
  metrics: Map<string, Metric>;
  onRefresh: () => void;
  refreshing: boolean;
}) {
  const total = Object.values(results.users).reduce((a, b) => a + b, 0);
  return (
    <>
      {results.srm.mismatch && (
        <div className="error" role="alert">
          <strong>The split does not look as configured.</strong> The users seen per variant differ from the split&apos;s weights by more than chance allows (p
          = {results.srm.pValue?.toExponential(1)}). Some users may be missing from one variant (a redirect, a crash, a bot filter): trust no result until the
          cause is found.
        </div>
      )}
      {results.multipleExposures > 0 && (
        <p className="note" role="status">
          {plural(results.multipleExposures, 'user was', 'users were')} exposed to more than one variant; each is counted in the first variant it saw.
        </p>
      )}
      <Section
        title="Users"
        actions={
          <div className="actions">
            <a className="button small" href={csvHref} download>
              Download CSV
            </a>
            <Button size="small" onClick={onRefresh} busy={refreshing} busyText="Refreshing…">
              Refresh
            </Button>
          </div>
        }
      >
        {total === 0 ? (
          <EmptyState title="No user counted yet">
            Users are counted when the split serves them (a single-flag OFREP evaluation with a targetingKey, or an exposure sent to /v1/track).
          </EmptyState>
        ) : (
          <p>
            {Object.entries(results.users)
              .map(([variant, n]) => `${titleCase(variant)}: ${n.toLocaleString()}`)
              .join(' · ')}
          </p>
        )}
        {results.timeline && results.timeline.length > 1 && <UsersChart timeline={results.timeline} />}
      </Section>
      {results.metrics.map((m) => (
        <MetricView
          key={m.metric}
          result={m}
          metric={metrics.get(m.metric)}
          control={experiment.controlVariant}
          guardrail={experiment.guardrails.includes(m.metric)}
        />
      ))}
    </>
  );
}

function MetricView({
  result,
  metric,
  control,
  guardrail,
}: {
  result: Results['metrics'][number];
  metric: Metric | undefined;
  control: string;
  guardrail: boolean;
}) {
  const named = { name: metric?.name ?? result.metric, direction: metric?.direction ?? 'increase' } as const;
  const scale = Math.max(0.05, ...result.comparisons.flatMap((c) => (c.ci95 ? c.ci95.map(Math.abs) : [])));
  return (
    <Section title={`${named.name}${guardrail ? ' (guardrail)' : ''}`}>
      <Table label={`Results for ${named.name}`} className="results">
        <thead>
          <tr>
            <th scope="col">Variant</th>
            <th scope="col">Users</th>
            <th scope="col">{result.type === 'proportion' ? 'Rate' : 'Mean'}</th>
            <th scope="col">Lift (95 % interval)</th>
            <th scope="col">Chance to win</th>
          </tr>
        </thead>
        <tbody>
          {result.variants.map((v) => {
            const c = result.comparisons.find((x) => x.variant === v.variant);
            return (
              <tr key={v.variant}>
                <th scope="row">
                  {v.variant} {v.variant === control && <Badge tone="muted">control</Badge>}
                </th>
                <td>{v.users.toLocaleString()}</td>
                <td title={`standard deviation ${v.stddev.toPrecision(3)}`}>{formatMean(result.type, v.mean)}</td>
                <td>{c ? <LiftBar comparison={c} scale={scale} direction={named.direction} /> : <span className="muted">baseline</span>}</td>
                <td>{c?.chanceToWin != null ? `${Math.round(c.chanceToWin * 100)} %` : '—'}</td>
              </tr>
            );
          })}
        </tbody>
      </Table>
      {result.comparisons.map((c) => (
        <p key={c.variant} className={`verdict ${toneOf(isGood(c, named.direction))}`}>
          {verdict(c, named)}
        </p>
      ))}
    </Section>
  );
}

const toneOf = (good: boolean | undefined) => (good === undefined ? 'neutral' : good ? 'good' : 'bad');

/** The lift and its interval as a bar around zero, on a scale shared by the metric's rows. */
function LiftBar({ comparison, scale, direction }: { comparison: Comparison; scale: number; direction: Metric['direction'] }) {
  const { relativeLift: lift, ci95 } = comparison;
  if (lift === null || ci95 === null) return <span className="muted">not enough data</span>;
  const x = (v: number) => 50 + (Math.max(-scale, Math.min(scale, v)) / scale) * 48;
  const tone = toneOf(isGood(comparison, direction));
  return (
    <span className="lift">
      <svg viewBox="0 0 100 12" width="120" height="14" role="img" aria-label={`${percent(lift, true)}, from ${percent(ci95[0])} to ${percent(ci95[1])}`}>
        <line x1="50" x2="50" y1="0" y2="12" className="zero" />
        <rect x={x(ci95[0])} width={Math.max(1, x(ci95[1]) - x(ci95[0]))} y="3" height="6" rx="2" className={`interval ${tone}`} />
        <line x1={x(lift)} x2={x(lift)} y1="1" y2="11" className="point" />
      </svg>{' '}
      {percent(lift, true)}{' '}
      <small className="muted">
        ({percent(ci95[0])} to {percent(ci95[1])})
      </small>
    </span>
  );
}

/** Users counted per variant at the end of each day. */
function UsersChart({ timeline }: { timeline: NonNullable<Results['timeline']> }) {
  const variants = [...new Set(timeline.flatMap((p) => Object.keys(p.users)))];
  const max = Math.max(1, ...timeline.flatMap((p) => Object.values(p.users)));
  const width = 300;
  const height = 100;
  const x = (i: number) => (timeline.length === 1 ? 0 : (i / (timeline.length - 1)) * width);
  const y = (n: number) => height - (n / max) * height;
  return (
    <figure className="users-chart">
      <svg viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" role="img" aria-label="Users per variant over time">
        {variants.map((v, i) => (
          <polyline key={v} className={`series s${i % 4}`} fill="none" points={timeline.map((p, j) => `${x(j)},${y(p.users[v] ?? 0)}`).join(' ')} />
        ))}
      </svg>
      <figcaption>
        {variants.map((v, i) => (
          <span key={v} className={`legend s${i % 4}`}>
            {v}
          </span>
        ))}{' '}
        <small className="muted">
          {timeline[0]!.date} to {timeline[timeline.length - 1]!.date}, up to {max.toLocaleString()} users per variant
        </small>
      </figcaption>
    </figure>
  );
}
