import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api } from '../api.ts';
import { useCanWrite } from '../session.ts';
import { Differences } from '../targeting/Differences.tsx';
import { Badge, Button, EmptyState, ErrorMessage, Loading, plural, Section, Select, Switch, Table, toast } from '../ui/index.ts';
import { ProjectHeader, useProject } from './Projects.tsx';

// Issue 24: two environments flag by flag, and promotion of the chosen flags from one to the other (a
// change request when the target is protected). Each difference reads as what promoting does to the
// target (issue 31 item 1): the target's value struck out, the source's inserted, as the request shows it.

interface Comparison {
  slug: string;
  status: 'identical' | 'different' | 'missing';
  missingIn: 'from' | 'to' | null;
  differences: Array<{ field: string; from: unknown; to: unknown }>;
  segments: { from: string[]; to: string[] };
}

export function CompareScreen({ params }: { params: { key: string } }) {
  const canWrite = useCanWrite();
  const project = useProject(params.key);
  const envs = project.data?.environments ?? [];
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const fromKey = from || envs[1]?.key || envs[0]?.key || '';
  const toKey = to || envs[envs.length - 1]?.key || '';
  const [chosen, setChosen] = useState<string[]>([]);
  const comparison = useQuery({
    queryKey: ['compare', params.key, fromKey, toKey],
    enabled: fromKey !== '' && toKey !== '' && fromKey !== toKey,
    queryFn: () =>
      api<{ flags: Comparison[] }>(
        'GET',
        `/projects/${encodeURIComponent(params.key)}/compare?from=${encodeURIComponent(fromKey)}&to=${encodeURIComponent(toKey)}`,
      ),
  });
  const promote = useMutation({
    mutationFn: () =>
      api<{ applied: string[]; changeRequest: { id: string } | null }>('POST', `/projects/${encodeURIComponent(params.key)}/promote`, {
        from: fromKey,
        to: toKey,
        flags: chosen,
      }),
    // Promotion writes the target's flags, or opens a change request where the target is protected.
    meta: {
      error: false,
      invalidates: [['compare', params.key], ['flags', params.key], ['stale-flags', params.key], ['change-requests', params.key], ['audit']],
    },
    onSuccess: (answer) => {
      setChosen([]);
      if (answer.changeRequest) toast.info(`${name(toKey)} is protected: a change request awaits review`);
      else toast.success(`Promoted ${plural(answer.applied.length, 'flag')} to ${name(toKey)}`);
    },
  });
  const name = (key: string) => envs.find((e) => e.key === key)?.name ?? key;
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  const toggle = (slug: string, on: boolean) => setChosen((list) => (on ? [...list, slug] : list.filter((s) => s !== slug)));
  const pick = (set: (key: string) => void) => (key: string) => {
    set(key);
    setChosen([]);
  };
  return (
    <>
      <ProjectHeader project={project.data} current="compare" />
      <Section title="Compare environments">
        <div className="filters" role="group" aria-label="Environments to compare">
          <Select label="From" value={fromKey} onChange={pick(setFrom)}>
            {envs.map((e) => (
              <option key={e.key} value={e.key}>
                {e.name}
              </option>
            ))}
          </Select>
          <Select label="To" value={toKey} onChange={pick(setTo)}>
            {envs.map((e) => (
              <option key={e.key} value={e.key}>
                {e.name}
              </option>
            ))}
          </Select>
        </div>
        {fromKey === toKey && <p className="muted">Choose two different environments.</p>}
        {comparison.isPending && fromKey !== toKey && <Loading what="the comparison" />}
        <ErrorMessage error={comparison.error} />
        {comparison.data && comparison.data.flags.length === 0 && <EmptyState title="No flag to compare">This project has no flag yet.</EmptyState>}
        {comparison.data && comparison.data.flags.length > 0 && (
          <Table label={`Flags of ${name(fromKey)} against ${name(toKey)}`} className="compare">
            <thead>
              <tr>
                <th scope="col">Promote</th>
                <th scope="col">Flag</th>
                <th scope="col">Status</th>
                <th scope="col">Promoting changes {name(toKey)}</th>
              </tr>
            </thead>
            <tbody>
              {comparison.data.flags.map((f) => (
                <tr key={f.slug}>
                  <td>
                    <Switch
                      ariaLabel={`Promote ${f.slug}`}
                      checked={chosen.includes(f.slug)}
                      disabled={f.status !== 'different' || !canWrite}
                      onChange={(on) => toggle(f.slug, on)}
                    />
                  </td>
                  <th scope="row">{f.slug}</th>
                  <td>
                    {f.status === 'missing' ? (
                      <Badge tone="warn">missing in {name(f.missingIn === 'from' ? fromKey : toKey)}</Badge>
                    ) : f.status === 'different' ? (
                      <Badge tone="warn">different</Badge>
                    ) : (
                      <Badge tone="muted">identical</Badge>
                    )}
                  </td>
                  <td>
                    {f.differences.length > 0 && (
                      <Differences
                        label={`What promoting ${f.slug} does to ${name(toKey)}`}
                        differences={f.differences.map((d) => ({ field: d.field, from: d.to, to: d.from }))}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        <div className="actions">
          <Button variant="primary" disabled={!canWrite || chosen.length === 0} busy={promote.isPending} busyText="Promoting…" onClick={() => promote.mutate()}>
            {`Promote ${plural(chosen.length, 'flag')} to ${name(toKey)}`}
          </Button>
        </div>
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
