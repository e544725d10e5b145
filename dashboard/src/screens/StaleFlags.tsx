import { useQuery } from '@tanstack/react-query';
import { useDeferredValue, useState } from 'react';
import { Link } from 'wouter';
import { api, type StaleReport, type StaleRule } from '../api.ts';
import { Badge, DateText, EmptyState, ErrorMessage, Field, Loading, plural, Table } from '../ui/index.ts';
import { ProjectHeader, useProject } from './Projects.tsx';

/** What each rule of the report means, in the words of the screen. */
export const RULE_TEXT: Record<StaleRule, string> = {
  expired_but_referenced: 'Expired, still in code',
  unreferenced: 'Not referenced in any branch',
  unchanged: 'Unchanged',
  not_evaluated: 'Not evaluated',
};

const daysRule = (v: string) => (/^\d{1,4}$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= 3650 ? undefined : 'Enter a whole number of days from 1 to 3650');

/** The project's flags that look ready to clean up (GET /admin/v1/projects/:key/stale-flags). */
export function StaleFlagsScreen({ params }: { params: { key: string } }) {
  const project = useProject(params.key);
  const [days, setDays] = useState('30');
  const deferredDays = useDeferredValue(days);
  const valid = !daysRule(deferredDays);
  const report = useQuery({
    queryKey: ['stale-flags', params.key, deferredDays],
    queryFn: () => api<StaleReport>('GET', `/projects/${encodeURIComponent(params.key)}/stale-flags?days=${encodeURIComponent(deferredDays)}`),
    enabled: valid,
  });
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  return (
    <>
      <ProjectHeader project={project.data} current="stale" />
      <div className="toolbar">
        <Field label="Unchanged for at least (days)" type="number" inputMode="numeric" value={days} onChange={setDays} validate={daysRule} hint="1 to 3650" />
      </div>
      {!valid && <p className="muted">The report shows once the number of days is a whole number from 1 to 3650.</p>}
      {report.isPending && valid && <Loading what="the report" />}
      <ErrorMessage error={report.error} />
      {report.data && !report.data.codeRefsUploaded && (
        <p className="muted">
          No code reference was uploaded yet, so flags are not checked against the code. Run the scanner (<code>flagpost code-refs</code>, see cli/README.md: it
          is not on npm yet) in CI to find where flags are used.
        </p>
      )}
      {report.data && report.data.flags.length === 0 && (
        <EmptyState title="No stale flag">Every flag is in use and changed within {plural(report.data.unchangedDays, 'day')}.</EmptyState>
      )}
      {report.data && report.data.flags.length > 0 && (
        <Table className="stale" label="Stale flags">
          <caption>
            {plural(report.data.flags.length, 'stale flag')} (unchanged rule: {plural(report.data.unchangedDays, 'day')})
          </caption>
          <thead>
            <tr>
              <th scope="col">Flag</th>
              <th scope="col">Why</th>
              <th scope="col">Last changed</th>
              <th scope="col">Code</th>
            </tr>
          </thead>
          <tbody>
            {report.data.flags.map((flag) => (
              <tr key={flag.slug}>
                <th scope="row">
                  <Link href={`/projects/${params.key}/flags/${encodeURIComponent(flag.slug)}`}>{flag.slug}</Link>
                  {flag.description && <div className="muted">{flag.description}</div>}
                </th>
                <td>
                  <ul className="plain">
                    {flag.rules.map((rule) => (
                      <li key={rule}>
                        <Badge tone={rule === 'unchanged' ? undefined : 'warn'}>{RULE_TEXT[rule]}</Badge>
                        {rule === 'expired_but_referenced' && ` in ${flag.expiredIn.map((e) => e.name).join(', ')}`}
                      </li>
                    ))}
                  </ul>
                </td>
                <td>
                  <DateText iso={flag.lastChangedAt} />
                </td>
                <td>
                  {flag.removedFromCodeAt && (
                    <p>
                      Removed from code on <DateText iso={flag.removedFromCodeAt} />
                    </p>
                  )}
                  {flag.references.length > 0 && (
                    <p>
                      {plural(flag.references.length, 'reference')} in{' '}
                      {plural(new Set(flag.references.map((r) => `${r.projectName} · ${r.branch}`)).size, 'branch', 'branches')}
                    </p>
                  )}
                  {flag.references.length === 0 && !flag.removedFromCodeAt && report.data.codeRefsUploaded && <p className="muted">Never seen in code</p>}
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </>
  );
}
