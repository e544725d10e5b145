import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, type Project } from '../api.ts';
import { Breadcrumbs, EmptyState, ErrorMessage, Field, formatDate, Loading, NavTabs, rules, Section, Table } from '../ui/index.ts';
import { FirstRunChecklist } from './Checklist.tsx';
import { useCanWrite } from '../session.ts';

export function ProjectsScreen() {
  const canWrite = useCanWrite();
  const [, navigate] = useLocation();
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => api<{ projects: Project[] }>('GET', '/projects') });
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: (value: string) => api<Project>('POST', '/projects', { name: value }),
    meta: { success: 'Created the project', error: false, invalidates: [['projects'], ['audit']] },
    onSuccess: (project) => navigate(`/projects/${project.key}`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(name);
  };
  return (
    <>
      <h1>Projects</h1>
      {projects.data && <FirstRunChecklist projects={projects.data.projects} />}
      {projects.isPending && <Loading what="projects" />}
      <ErrorMessage error={projects.error} />
      {projects.data && projects.data.projects.length === 0 && (
        <EmptyState title="No project yet">
          A project holds flags for one app or product, in environments such as development and production. Create the first one below.
        </EmptyState>
      )}
      {projects.data && projects.data.projects.length > 0 && (
        <Table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Environments</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {projects.data.projects.map((p) => (
              <tr key={p.key}>
                <td>
                  <Link href={`/projects/${p.key}`}>{p.name}</Link>
                </td>
                <td>{p.environments.map((e) => e.name).join(', ')}</td>
                <td>{formatDate(p.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <Section title="New project">
        <form onSubmit={submit} className="inline">
          <Field label="Project name" path="name" value={name} onChange={setName} validate={rules.required} required />
          <button type="submit" className="primary" disabled={create.isPending || !canWrite}>
            {create.isPending ? 'Creating…' : 'Create project'}
          </button>
        </form>
        <ErrorMessage error={create.error} />
      </Section>
    </>
  );
}

/** The project's name and its sub-screens. */
export function ProjectHeader({
  project,
  current,
}: {
  project: Project;
  current: 'flags' | 'environments' | 'segments' | 'playground' | 'stale' | 'usage' | 'history' | 'changes' | 'compare' | 'webhooks' | 'experiments';
}) {
  const base = `/projects/${project.key}`;
  return (
    <>
      <Breadcrumbs items={[{ label: 'Projects', href: '/projects' }, { label: project.name }]} />
      <h1>{project.name}</h1>
      <NavTabs
        label="Project"
        current={current}
        items={[
          { key: 'flags', href: base, title: 'Flags' },
          { key: 'environments', href: `${base}/environments`, title: 'Environments and keys' },
          { key: 'segments', href: `${base}/segments`, title: 'Segments' },
          { key: 'playground', href: `${base}/playground`, title: 'Playground' },
          { key: 'stale', href: `${base}/stale-flags`, title: 'Stale flags' },
          { key: 'usage', href: `${base}/usage`, title: 'Usage' },
          { key: 'history', href: `${base}/history`, title: 'History' },
          { key: 'changes', href: `${base}/changes`, title: 'Change requests' },
          { key: 'experiments', href: `${base}/experiments`, title: 'Experiments' },
          { key: 'compare', href: `${base}/compare`, title: 'Compare and promote' },
          { key: 'webhooks', href: `${base}/webhooks`, title: 'Webhooks' },
        ]}
      />
    </>
  );
}

export function useProject(key: string) {
  return useQuery({ queryKey: ['project', key], queryFn: () => api<Project>('GET', `/projects/${encodeURIComponent(key)}`) });
}
