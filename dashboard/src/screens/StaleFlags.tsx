import { useQuery } from '@tanstack/react-query';
import { useDeferredValue, useState } from 'react';
import { Link } from 'wouter';
import { api, type StaleReport, type StaleRule } from '../api.ts';
import { ErrorMessage, Field, formatDate, Loading, Table } from '../ui.tsx';
import { ProjectHeader, useProject } from './Projects.tsx';

/** What each rule of the report means, in the words of the screen. */
export const RULE_TEXT: Record<StaleRule, string> = {
  expired_but_referenced: 'Expired, still in code',
  unreferenced: 'Not referenced in any branch',
  unchanged: 'Unchanged',
  not_evaluated: 'Not evaluated',
};

/** The project's flags that look ready to clean up (GET /admin/v1/projects/:key/stale-flags). */
export function StaleFlagsScreen({ params }: { params: { key: string } }) {
  const project = useProject(params.key);
  const [days, setDays] = useState('30');
  const deferredDays = useDeferredValue(days);
  const valid = /^\d{1,4}$/.test(deferredDays) && Number(deferredDays) >= 1 && Number(deferredDays) <= 3650;
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
        <Field label="Unchanged for at least (days)" type="number" value={days} onChange={setDays} hint="1 to 3650" />
      </div>
      {!valid && (
        <div role="alert" className="error">
          <p>Enter a whole number of days from 1 to 3650.</p>
        </div>
      )}
      {report.isPending && valid && <Loading what="the report" />}
      <ErrorMessage error={report.error} />
      {report.data && !report.data.codeRefsUploaded && (
        <p className="muted">
          No code reference was uploaded yet, so flags are not checked against the code. Run the scanner (<code>flagpost code-refs</code>, see cli/README.md: it
          is not on npm yet) in CI to find where flags are used.
        </p>
      )}
      {report.data && report.data.flags.length === 0 && <p>No stale flag: every flag is in use and changed recently.</p>}
      {report.data && report.data.flags.length > 0 && (
        <Table className="stale">
          <caption>
            {report.data.flags.length} stale flags (unchanged rule: {report.data.unchangedDays} days)
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
                        <span className={rule === 'unchanged' ? 'badge' : 'badge warn'}>{RULE_TEXT[rule]}</span>
                        {rule === 'expired_but_referenced' && ` in ${flag.expiredIn.map((e) => e.name).join(', ')}`}
                      </li>
                    ))}
                  </ul>
                </td>
                <td>{formatDate(flag.lastChangedAt)}</td>
                <td>
                  {flag.removedFromCodeAt && <p>Removed from code on {formatDate(flag.removedFromCodeAt)}</p>}
                  {flag.references.length > 0 && (
                    <p>
                      {flag.references.length} references in {new Set(flag.references.map((r) => `${r.projectName} · ${r.branch}`)).size} branches
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
