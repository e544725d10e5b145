import { useMutation, useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Link } from 'wouter';
import { api } from '../api.ts';
import { useCanWrite } from '../session.ts';
import { ErrorMessage, Loading, Section } from '../ui.tsx';
import { ProjectHeader, useProject } from './Projects.tsx';

// Issue 24: two environments flag by flag, and promotion of the chosen flags from one to the other (a
// change request when the target is protected).

interface Comparison {
  slug: string;
  status: 'identical' | 'different' | 'missing';
  missingIn: 'from' | 'to' | null;
  differences: Array<{ field: string; from: unknown; to: unknown }>;
  segments: { from: string[]; to: string[] };
}

const show = (value: unknown) => (value === null || value === undefined ? 'none' : typeof value === 'string' ? value : JSON.stringify(value));

export function CompareScreen({ params }: { params: { key: string } }) {
  const canWrite = useCanWrite();
  const project = useProject(params.key);
  const envs = project.data?.environments ?? [];
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const fromKey = from || envs[1]?.key || envs[0]?.key || '';
  const toKey = to || envs[envs.length - 1]?.key || '';
  const [chosen, setChosen] = useState<string[]>([]);
  const ids = { from: useId(), to: useId() };
  const comparison = useQuery({
    queryKey: ['compare', params.key, fromKey, toKey],
    enabled: fromKey !== '' && toKey !== '',
    queryFn: () => api<{ flags: Comparison[] }>('GET', `/projects/${encodeURIComponent(params.key)}/compare?from=${fromKey}&to=${toKey}`),
  });
  const promote = useMutation({
    mutationFn: () =>
      api<{ applied: string[]; changeRequest: { id: string } | null }>('POST', `/projects/${encodeURIComponent(params.key)}/promote`, {
        from: fromKey,
        to: toKey,
        flags: chosen,
      }),
    onSuccess: () => setChosen([]),
  });
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  const name = (key: string) => envs.find((e) => e.key === key)?.name ?? key;
  const toggle = (slug: string, on: boolean) => setChosen((list) => (on ? [...list, slug] : list.filter((s) => s !== slug)));
  return (
    <>
      <ProjectHeader project={project.data} current="compare" />
      <Section title="Compare environments">
        <div className="inline">
          <div className="field">
            <label htmlFor={ids.from}>From</label>
            <select id={ids.from} value={fromKey} onChange={(e) => setFrom(e.target.value)}>
              {envs.map((e) => (
                <option key={e.key} value={e.key}>
                  {e.name}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={ids.to}>To</label>
            <select id={ids.to} value={toKey} onChange={(e) => setTo(e.target.value)}>
              {envs.map((e) => (
                <option key={e.key} value={e.key}>
                  {e.name}
                </option>
              ))}
            </select>
          </div>
        </div>
        {comparison.isPending && fromKey !== toKey && <Loading what="the comparison" />}
        <ErrorMessage error={comparison.error} />
        {comparison.data && (
          <table aria-label={`Flags of ${name(fromKey)} against ${name(toKey)}`}>
            <thead>
              <tr>
                <th scope="col">Promote</th>
                <th scope="col">Flag</th>
                <th scope="col">Status</th>
                <th scope="col">Differences</th>
              </tr>
            </thead>
            <tbody>
              {comparison.data.flags.map((f) => (
                <tr key={f.slug}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Promote ${f.slug}`}
                      checked={chosen.includes(f.slug)}
                      disabled={f.status !== 'different'}
                      onChange={(e) => toggle(f.slug, e.target.checked)}
                    />
                  </td>
                  <th scope="row">{f.slug}</th>
                  <td>{f.status === 'missing' ? `missing in ${name(f.missingIn === 'from' ? fromKey : toKey)}` : f.status}</td>
                  <td>
                    {f.differences.map((d) => (
                      <div key={d.field}>
                        {d.field}: <code>{show(d.from)}</code> → <code>{show(d.to)}</code>
                      </div>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <button type="button" className="primary" disabled={!canWrite || chosen.length === 0 || promote.isPending} onClick={() => promote.mutate()}>
          {promote.isPending ? 'Promoting…' : `Promote ${chosen.length} to ${name(toKey)}`}
        </button>
        <ErrorMessage error={promote.error} />
        {promote.data?.changeRequest && (
          <p role="status">
            {name(toKey)} is protected: <Link href={`/projects/${params.key}/changes/${promote.data.changeRequest.id}`}>a change request</Link> awaits review.
          </p>
        )}
        {promote.data && promote.data.applied.length > 0 && <p role="status">Promoted {promote.data.applied.join(', ')}.</p>}
      </Section>
    </>
  );
}
