import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, type Environment, type FlagEntry, type Project } from '../api.ts';
import { useCanWrite, useSession } from '../session.ts';
import { ErrorMessage, Field, formatDate, Loading, Section, TextArea } from '../ui.tsx';
import { ProjectHeader, useProject } from './Projects.tsx';

// Issue 24: change requests of a project (open and scheduled ones), a new request, and the protection of
// each environment. The request itself has its own screen (ChangeRequest.tsx).

/** An environment with its protection (docs/api.md, PATCH .../environments/{envKey}). */
export type ProtectedEnvironment = Environment & { protected: boolean; requiredApprovals: number };

export interface ChangeRequestSummary {
  id: string;
  environment: { key: string; name: string };
  title: string;
  status: string;
  author: string;
  approvals: number;
  scheduledAt: string | null;
  createdAt: string;
  changes: Array<{ kind: 'flag' | 'segment'; key: string }>;
}

const STATUS_TEXT: Record<string, string> = {
  draft: 'Draft',
  in_review: 'In review',
  approved: 'Approved',
  scheduled: 'Scheduled',
  applied: 'Applied',
  rejected: 'Rejected',
  cancelled: 'Cancelled',
};
export const statusText = (status: string) => STATUS_TEXT[status] ?? status;

export function ChangeRequestsScreen({ params }: { params: { key: string } }) {
  const project = useProject(params.key);
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  return (
    <>
      <ProjectHeader project={project.data} current="changes" />
      <OpenRequests projectKey={params.key} />
      <NewRequest project={project.data} />
      <Protection project={project.data} />
    </>
  );
}

function OpenRequests({ projectKey }: { projectKey: string }) {
  const list = useQuery({
    queryKey: ['change-requests', projectKey],
    queryFn: () => api<{ changeRequests: ChangeRequestSummary[] }>('GET', `/projects/${encodeURIComponent(projectKey)}/change-requests`),
  });
  return (
    <Section title="Open and scheduled changes">
      {list.isPending && <Loading what="the change requests" />}
      <ErrorMessage error={list.error} />
      {list.data && list.data.changeRequests.length === 0 && <p className="muted">No open change request.</p>}
      {list.data && list.data.changeRequests.length > 0 && (
        <table aria-label="Open change requests">
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Environment</th>
              <th scope="col">Status</th>
              <th scope="col">Approvals</th>
              <th scope="col">Applies at</th>
              <th scope="col">Author</th>
            </tr>
          </thead>
          <tbody>
            {list.data.changeRequests.map((r) => (
              <tr key={r.id}>
                <th scope="row">
                  <Link href={`/projects/${projectKey}/changes/${r.id}`}>{r.title}</Link>
                </th>
                <td>{r.environment.name}</td>
                <td>{statusText(r.status)}</td>
                <td>{r.approvals}</td>
                <td>{formatDate(r.scheduledAt)}</td>
                <td>{r.author}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

/** A request of one flag's change: its default serve and state, or any fields as JSON (PATCH of the flag). */
function NewRequest({ project }: { project: Project }) {
  const canWrite = useCanWrite();
  const [, navigate] = useLocation();
  const environments = project.environments as ProtectedEnvironment[];
  const [envKey, setEnvKey] = useState(environments.find((e) => e.protected)?.key ?? environments[0]?.key ?? '');
  const [slug, setSlug] = useState('');
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [serve, setServe] = useState('');
  const [more, setMore] = useState('');
  const [problem, setProblem] = useState('');
  const ids = { env: useId(), flag: useId(), serve: useId() };
  const flags = useQuery({
    queryKey: ['flags', project.key],
    queryFn: () => api<{ flags: FlagEntry[] }>('GET', `/projects/${encodeURIComponent(project.key)}/flags`),
  });
  const flag = flags.data?.flags.find((f) => f.slug === slug)?.environments.find((e) => e.environment.key === envKey);
  const create = useMutation({
    mutationFn: (values: Record<string, unknown>) =>
      api<{ id: string }>('POST', `/projects/${encodeURIComponent(project.key)}/change-requests`, {
        environment: envKey,
        title: title.trim(),
        description,
        flags: [{ slug, values }],
        submit: true,
      }),
    onSuccess: (created) => navigate(`/projects/${project.key}/changes/${created.id}`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setProblem('');
    let values: Record<string, unknown> = {};
    if (more.trim() !== '') {
      try {
        values = JSON.parse(more) as Record<string, unknown>;
      } catch {
        setProblem('The other fields are not valid JSON.');
        return;
      }
    }
    if (serve !== '') values = { ...values, defaultVariant: serve };
    create.mutate(values);
  };
  return (
    <Section title="Propose a change">
      <form onSubmit={submit} aria-label="New change request">
        <div className="field">
          <label htmlFor={ids.env}>Environment</label>
          <select id={ids.env} value={envKey} onChange={(e) => setEnvKey(e.target.value)}>
            {environments.map((e) => (
              <option key={e.key} value={e.key}>
                {e.name}
                {e.protected ? ' (protected)' : ''}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.flag}>Flag</label>
          <select id={ids.flag} value={slug} onChange={(e) => setSlug(e.target.value)} required>
            <option value="">Choose a flag</option>
            {flags.data?.flags.map((f) => (
              <option key={f.slug} value={f.slug}>
                {f.slug}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.serve}>Serve by default</label>
          <select id={ids.serve} value={serve} onChange={(e) => setServe(e.target.value)}>
            <option value="">Keep {flag?.defaultVariant ?? 'as it is'}</option>
            {Object.keys(flag?.variants ?? {}).map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        </div>
        <TextArea label="Other fields (JSON, as PATCH of the flag)" value={more} onChange={setMore} />
        <Field label="Title" value={title} onChange={setTitle} required />
        <TextArea label="Description" value={description} onChange={setDescription} />
        {problem && (
          <p role="alert" className="error">
            {problem}
          </p>
        )}
        <ErrorMessage error={create.error} />
        <button type="submit" className="primary" disabled={!canWrite || create.isPending || slug === '' || title.trim() === ''}>
          {create.isPending ? 'Proposing…' : 'Propose for review'}
        </button>
      </form>
    </Section>
  );
}

/** Owners protect environments: their flags change only through approved change requests. */
function Protection({ project }: { project: Project }) {
  const session = useSession();
  const isOwner = session.data?.role === 'owner';
  return (
    <Section title="Protected environments">
      <p className="muted">
        A protected environment refuses direct changes: they go through change requests approved by members other than their author. Owners may bypass in an
        emergency; the audit log records it.
      </p>
      <table aria-label="Environment protection">
        <thead>
          <tr>
            <th scope="col">Environment</th>
            <th scope="col">Protected</th>
            <th scope="col">Approvals needed</th>
            <th scope="col">
              <span className="sr-only">Save</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {(project.environments as ProtectedEnvironment[]).map((e) => (
            <ProtectionRow key={e.key} projectKey={project.key} environment={e} disabled={!isOwner} />
          ))}
        </tbody>
      </table>
      {!isOwner && <p className="muted">Only owners change the protection.</p>}
    </Section>
  );
}

function ProtectionRow({ projectKey, environment, disabled }: { projectKey: string; environment: ProtectedEnvironment; disabled: boolean }) {
  const [on, setOn] = useState(environment.protected);
  const [count, setCount] = useState(String(environment.requiredApprovals));
  const save = useMutation({
    mutationFn: () =>
      api('PATCH', `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(environment.key)}`, {
        protected: on,
        requiredApprovals: Number(count),
      }),
  });
  return (
    <tr>
      <th scope="row">{environment.name}</th>
      <td>
        <input type="checkbox" aria-label={`Protect ${environment.name}`} checked={on} disabled={disabled} onChange={(e) => setOn(e.target.checked)} />
      </td>
      <td>
        <input
          type="number"
          min={1}
          max={10}
          aria-label={`Approvals needed in ${environment.name}`}
          value={count}
          disabled={disabled}
          onChange={(e) => setCount(e.target.value)}
        />
      </td>
      <td>
        <button type="button" disabled={disabled || save.isPending} onClick={() => save.mutate()}>
          {save.isPending ? 'Saving…' : `Save ${environment.name}`}
        </button>
        <ErrorMessage error={save.error} />
      </td>
    </tr>
  );
}
