import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api } from '../api.ts';
import { Badge, Button, DateText, EmptyState, ErrorMessage, Loading, plural, Section, Table } from '../ui/index.ts';
import { ProjectHeader, useProject } from './Projects.tsx';

// Flag usage (issue 23, docs/api.md "Admin API: flag usage"): a flag's evaluations per day and
// environment as a small inline SVG chart (no chart library: one path per environment), and a project's
// flags sorted by use.

/** GET /admin/v1/projects/{projectKey}/flags/{slug}/usage */
export interface FlagUsageSeries {
  slug: string;
  days: string[];
  environments: Array<{ key: string; name: string; lastEvaluatedAt: string | null; evaluations: number[] }>;
}

/** GET /admin/v1/projects/{projectKey}/usage */
export interface ProjectUsage {
  days: number;
  flags: Array<{ slug: string; evaluations: number; lastEvaluatedAt: string | null; environments: Array<{ key: string; evaluations: number }> }>;
}

/** Series colours are the tokens --chart-1 … --chart-6 (a light and a dark value each, classes series-1 …); dashes tell them apart too. */
const SERIES = 6;
const seriesClass = (e: number) => `series-${(e % SERIES) + 1}`;
const DASHES = ['', '6 3', '2 3', '8 3 2 3', '1 2', '10 4'];
const WIDTH = 600;
const HEIGHT = 160;
const PAD = { left: 48, right: 8, top: 8, bottom: 22 };

const count = new Intl.NumberFormat();
const PERIODS = [7, 30, 90] as const;

/** The chart of one flag's evaluations per day, one line per environment, with its numbers as a table. */
export function UsageChart({ series }: { series: FlagUsageSeries }) {
  const max = Math.max(1, ...series.environments.flatMap((e) => e.evaluations));
  const n = series.days.length;
  const x = (i: number) => PAD.left + (n <= 1 ? 0 : (i * (WIDTH - PAD.left - PAD.right)) / (n - 1));
  const y = (v: number) => PAD.top + (HEIGHT - PAD.top - PAD.bottom) * (1 - v / max);
  const total = series.environments.reduce((sum, e) => sum + e.evaluations.reduce((a, b) => a + b, 0), 0);
  const label = `Evaluations per day of ${series.slug} over ${n} days: ${series.environments
    .map((e) => `${e.name} ${count.format(e.evaluations.reduce((a, b) => a + b, 0))}`)
    .join(', ')}`;
  return (
    <figure className="usage-chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width="100%" role="img" aria-label={label}>
        <line className="axis" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(0)} y2={y(0)} />
        <line className="grid-line" x1={PAD.left} x2={WIDTH - PAD.right} y1={y(max)} y2={y(max)} />
        <text x={PAD.left - 4} y={y(max) + 4} textAnchor="end" fontSize="11">
          {count.format(max)}
        </text>
        <text x={PAD.left - 4} y={y(0) + 4} textAnchor="end" fontSize="11">
          0
        </text>
        <text x={PAD.left} y={HEIGHT - 6} fontSize="11">
          {series.days[0]}
        </text>
        <text x={WIDTH - PAD.right} y={HEIGHT - 6} textAnchor="end" fontSize="11">
          {series.days[n - 1]}
        </text>
        {series.environments.map((env, e) => (
          <path
            key={env.key}
            d={env.evaluations.map((v, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}
            className={seriesClass(e)}
            fill="none"
            strokeDasharray={DASHES[e % DASHES.length]}
            strokeWidth="2"
          />
        ))}
      </svg>
      <figcaption>
        <ul className="plain legend">
          {series.environments.map((env, e) => (
            <li key={env.key}>
              <svg width="24" height="8" aria-hidden="true">
                <line className={seriesClass(e)} x1="0" x2="24" y1="4" y2="4" strokeDasharray={DASHES[e % DASHES.length]} strokeWidth="2" />
              </svg>{' '}
              {env.name}:{' '}
              {plural(
                env.evaluations.reduce((a, b) => a + b, 0),
                'evaluation',
              )}
              , last evaluated {env.lastEvaluatedAt ? <DateText iso={env.lastEvaluatedAt} /> : 'never (within the kept period)'}
            </li>
          ))}
        </ul>
        {total === 0 && <p className="muted">No evaluation in these {n} days.</p>}
      </figcaption>
      <details>
        <summary>Numbers per day</summary>
        <Table label={`Evaluations per day of ${series.slug}`}>
          <thead>
            <tr>
              <th scope="col">Day</th>
              {series.environments.map((env) => (
                <th scope="col" key={env.key}>
                  {env.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {series.days.map((day, i) => (
              <tr key={day}>
                <th scope="row">{day}</th>
                {series.environments.map((env) => (
                  <td key={env.key}>{count.format(env.evaluations[i] ?? 0)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </Table>
      </details>
    </figure>
  );
}

/** The usage section of a flag's screen: the chart over 7, 30 or 90 days. */
export function FlagUsageSection({ projectKey, slug }: { projectKey: string; slug: string }) {
  const [days, setDays] = useState<number>(30);
  const usage = useQuery({
    queryKey: ['flag-usage', projectKey, slug, days],
    queryFn: () => api<FlagUsageSeries>('GET', `/projects/${encodeURIComponent(projectKey)}/flags/${encodeURIComponent(slug)}/usage?days=${days}`),
  });
  return (
    <Section title="Usage">
      <p className="muted">
        Evaluations Flagpost answered per day (UTC). <code>/v1</code> reads behind a shared cache count only its misses.
      </p>
      <div className="actions" role="group" aria-label="Period">
        {PERIODS.map((d) => (
          <Button key={d} size="small" variant={d === days ? 'primary' : 'secondary'} aria-pressed={d === days} onClick={() => setDays(d)}>
            {`${d} days`}
          </Button>
        ))}
      </div>
      {usage.isPending && <Loading what="the usage" />}
      <ErrorMessage error={usage.error} />
      {usage.data && <UsageChart series={usage.data} />}
    </Section>
  );
}

/** The project's flags sorted by use (GET /admin/v1/projects/:key/usage). */
export function ProjectUsageScreen({ params }: { params: { key: string } }) {
  const project = useProject(params.key);
  const [days, setDays] = useState<number>(30);
  const usage = useQuery({
    queryKey: ['project-usage', params.key, days],
    queryFn: () => api<ProjectUsage>('GET', `/projects/${encodeURIComponent(params.key)}/usage?days=${days}`),
  });
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  const names = new Map(project.data.environments.map((e) => [e.key, e.name]));
  const max = Math.max(1, ...(usage.data?.flags.map((f) => f.evaluations) ?? []));
  return (
    <>
      <ProjectHeader project={project.data} current="usage" />
      <div className="actions" role="group" aria-label="Period">
        {PERIODS.map((d) => (
          <Button key={d} size="small" variant={d === days ? 'primary' : 'secondary'} aria-pressed={d === days} onClick={() => setDays(d)}>
            {`${d} days`}
          </Button>
        ))}
      </div>
      {usage.isPending && <Loading what="the usage" />}
      <ErrorMessage error={usage.error} />
      {usage.data && usage.data.flags.length === 0 && (
        <EmptyState title="No flag yet">Each flag's evaluations per day show here once the project has flags and an SDK reads them.</EmptyState>
      )}
      {usage.data && usage.data.flags.length > 0 && (
        <Table label={`Flags by evaluations over the last ${usage.data.days} days, most used first`} className="usage">
          <thead>
            <tr>
              <th scope="col">Flag</th>
              <th scope="col">Evaluations</th>
              <th scope="col">Per environment</th>
              <th scope="col">Last evaluated</th>
            </tr>
          </thead>
          <tbody>
            {usage.data.flags.map((flag) => (
              <tr key={flag.slug}>
                <th scope="row">
                  <Link href={`/projects/${params.key}/flags/${encodeURIComponent(flag.slug)}`}>{flag.slug}</Link>
                </th>
                <td>
                  <svg width="80" height="8" aria-hidden="true">
                    <rect className="bar" x="0" y="0" width={Math.max(flag.evaluations > 0 ? 1 : 0, (80 * flag.evaluations) / max)} height="8" />
                  </svg>{' '}
                  {count.format(flag.evaluations)}
                </td>
                <td>
                  <ul className="plain">
                    {flag.environments.map((env) => (
                      <li key={env.key}>
                        {names.get(env.key) ?? env.key}: {count.format(env.evaluations)}
                      </li>
                    ))}
                  </ul>
                </td>
                <td>{flag.lastEvaluatedAt ? <DateText iso={flag.lastEvaluatedAt} /> : <Badge tone="warn">Never</Badge>}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </>
  );
}
