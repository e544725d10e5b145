import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'wouter';
import { api, type Environment, type Project } from '../api.ts';
import { useSession } from '../session.ts';
import {
  Badge,
  Button,
  DateText,
  EmptyState,
  ErrorMessage,
  Field,
  Loading,
  plural,
  problemsOf,
  ProblemsProvider,
  Section,
  Switch,
  Table,
} from '../ui/index.ts';
import { ProjectHeader, useProject } from './Projects.tsx';

// Issue 24: change requests of a project (open and scheduled ones), how to propose one, and the protection of
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
  changes: Array<{ kind: 'flag' | 'segment' | 'release'; key: string }>;
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

const STATUS_TONE: Record<string, 'ok' | 'warn' | 'danger' | 'muted' | undefined> = {
  draft: 'muted',
  in_review: 'warn',
  approved: 'ok',
  scheduled: undefined,
  applied: 'ok',
  rejected: 'danger',
  cancelled: 'muted',
};

/** A change request's status as a badge ("In review"). */
export const StatusBadge = ({ status }: { status: string }) => <Badge tone={STATUS_TONE[status]}>{statusText(status)}</Badge>;

export function ChangeRequestsScreen({ params }: { params: { key: string } }) {
  const project = useProject(params.key);
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  return (
    <>
      <ProjectHeader project={project.data} current="changes" />
      <OpenRequests projectKey={params.key} />
      <HowToPropose project={project.data} />
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
      {list.data && list.data.changeRequests.length === 0 && (
        <EmptyState title="No open change request">
          Changes to a protected environment wait here for approval. Propose one by editing a flag there, or protect an environment at the bottom of this page.
        </EmptyState>
      )}
      {list.data && list.data.changeRequests.length > 0 && (
        <Table label="Open change requests">
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
                  <div className="muted small-text">{r.changes.map((c) => c.key).join(', ')}</div>
                </th>
                <td>{r.environment.name}</td>
                <td>
                  <StatusBadge status={r.status} />
                </td>
                <td>{r.approvals}</td>
                <td>{r.scheduledAt ? <DateText iso={r.scheduledAt} /> : <span className="muted">When applied</span>}</td>
                <td>{r.author}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </Section>
  );
}

/**
 * How a change is proposed: by editing the flag as anywhere else (issue 31 item 4). In a protected
 * environment the list's switch, the flag's Save and the targeting editor open a change request instead
 * of writing; promotion and Revert propose theirs the same way. No one writes JSON to propose a change.
 */
function HowToPropose({ project }: { project: Project }) {
  const protectedNames = (project.environments as ProtectedEnvironment[]).filter((e) => e.protected).map((e) => e.name);
  return (
    <Section title="Propose a change">
      <p>
        Edit the flag as usual, from <Link href={`/projects/${project.key}`}>the flags</Link> or a flag&apos;s own page: in a protected environment
        {protectedNames.length > 0 ? ` (${protectedNames.join(', ')})` : ''} its switch, Save and the targeting editor propose the edit here for review instead
        of making it. <Link href={`/projects/${project.key}/compare`}>Compare environments</Link> proposes a promotion the same way, and so does Revert in the
        history.
      </p>
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
      <ul className="plain protection">
        {(project.environments as ProtectedEnvironment[]).map((e) => (
          <ProtectionRow key={e.key} projectKey={project.key} environment={e} disabled={!isOwner} />
        ))}
      </ul>
      {!isOwner && <p className="muted">Only owners change the protection.</p>}
    </Section>
  );
}

const approvalsRule = (v: string) => (/^\d+$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= 10 ? undefined : 'Enter a whole number from 1 to 10');

function ProtectionRow({ projectKey, environment, disabled }: { projectKey: string; environment: ProtectedEnvironment; disabled: boolean }) {
  const [on, setOn] = useState(environment.protected);
  const [count, setCount] = useState(String(environment.requiredApprovals));
  const save = useMutation({
    mutationFn: () =>
      api('PATCH', `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(environment.key)}`, {
        protected: on,
        requiredApprovals: Number(count),
      }),
    // The project answers with its environments' protection; the flag screens read it through the project.
    meta: { success: `Saved ${environment.name}`, error: false, invalidates: [['project', projectKey], ['projects'], ['audit']] },
  });
  const changed = on !== environment.protected || count !== String(environment.requiredApprovals);
  return (
    <li>
      <ProblemsProvider value={problemsOf(save.error)}>
        <form
          className="inline"
          aria-label={`Protection of ${environment.name}`}
          onSubmit={(event: FormEvent) => {
            event.preventDefault();
            if (!approvalsRule(count)) save.mutate();
          }}
        >
          <Switch label={`Protect ${environment.name}`} checked={on} disabled={disabled} onChange={setOn} />
          <Field
            label={`Approvals needed in ${environment.name}`}
            type="number"
            inputMode="numeric"
            path="requiredApprovals"
            value={count}
            onChange={setCount}
            validate={approvalsRule}
            disabled={disabled || !on}
            className="narrow-field"
          />
          <Button type="submit" busy={save.isPending} busyText="Saving…" disabled={disabled || !changed}>
            {`Save ${environment.name}`}
          </Button>
        </form>
      </ProblemsProvider>
      <ErrorMessage error={save.error} inline={['requiredApprovals']} />
      {environment.protected && (
        <p className="muted small-text">
          {environment.name} is protected: {plural(environment.requiredApprovals, 'approval')} needed.
        </p>
      )}
    </li>
  );
}
