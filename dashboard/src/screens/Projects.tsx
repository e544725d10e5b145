import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, type Project } from '../api.ts';
import { ErrorMessage, Field, formatDate, Loading, Section } from '../ui.tsx';
import { useCanWrite } from '../session.ts';

export function ProjectsScreen() {
  const canWrite = useCanWrite();
  const [, navigate] = useLocation();
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => api<{ projects: Project[] }>('GET', '/projects') });
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: (value: string) => api<Project>('POST', '/projects', { name: value }),
    onSuccess: (project) => navigate(`/projects/${project.key}`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(name);
  };
  return (
    <>
      <h1>Projects</h1>
      {projects.isPending && <Loading what="projects" />}
      <ErrorMessage error={projects.error} />
      {projects.data && projects.data.projects.length === 0 && <p className="muted">No project yet: create the first one below.</p>}
      {projects.data && projects.data.projects.length > 0 && (
        <table>
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
        </table>
      )}
      <Section title="New project">
        <form onSubmit={submit} className="inline">
          <Field label="Project name" value={name} onChange={setName} required />
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
  current: 'flags' | 'environments' | 'segments' | 'playground' | 'stale' | 'usage' | 'history' | 'changes' | 'compare' | 'webhooks';
}) {
  return (
    <>
      <p className="crumbs">
        <Link href="/projects">Projects</Link> /
      </p>
      <h1>{project.name}</h1>
      <nav aria-label="Project" className="tabs">
        <Link href={`/projects/${project.key}`} aria-current={current === 'flags' ? 'page' : undefined}>
          Flags
        </Link>
        <Link href={`/projects/${project.key}/environments`} aria-current={current === 'environments' ? 'page' : undefined}>
          Environments and keys
        </Link>
        <Link href={`/projects/${project.key}/segments`} aria-current={current === 'segments' ? 'page' : undefined}>
          Segments
        </Link>
        <Link href={`/projects/${project.key}/playground`} aria-current={current === 'playground' ? 'page' : undefined}>
          Playground
        </Link>
        <Link href={`/projects/${project.key}/stale-flags`} aria-current={current === 'stale' ? 'page' : undefined}>
          Stale flags
        </Link>
        <Link href={`/projects/${project.key}/usage`} aria-current={current === 'usage' ? 'page' : undefined}>
          Usage
        </Link>
        <Link href={`/projects/${project.key}/history`} aria-current={current === 'history' ? 'page' : undefined}>
          History
        </Link>
        <Link href={`/projects/${project.key}/changes`} aria-current={current === 'changes' ? 'page' : undefined}>
          Change requests
        </Link>
        <Link href={`/projects/${project.key}/compare`} aria-current={current === 'compare' ? 'page' : undefined}>
          Compare and promote
        </Link>
        <Link href={`/projects/${project.key}/webhooks`} aria-current={current === 'webhooks' ? 'page' : undefined}>
          Webhooks
        </Link>
      </nav>
    </>
  );
}

export function useProject(key: string) {
  return useQuery({ queryKey: ['project', key], queryFn: () => api<Project>('GET', `/projects/${encodeURIComponent(key)}`) });
}
