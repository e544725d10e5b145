import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { api, type Member, type Project } from '../api.ts';
import { ErrorMessage, Section } from '../ui.tsx';

// Roles on single projects (docs/adr/0033-project-roles.md): an owner gives a member a role on some
// projects only, besides (or, with the instance role "none", instead of) their instance-wide role.

type ProjectRole = 'viewer' | 'editor' | 'admin';
interface ProjectRoleEntry {
  projectKey: string;
  projectName: string;
  role: ProjectRole;
}

const PROJECT_ROLE_TEXT: Record<ProjectRole, string> = {
  viewer: 'Viewer: reads the project',
  editor: 'Editor: flags, segments, its forms and submissions',
  admin: 'Project admin: also environments, API keys and sync tokens',
};

function Select<T extends string>({ label, value, options, onChange }: { label: string; value: T; options: Array<[T, string]>; onChange: (value: T) => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as T)}>
        {options.map(([key, text]) => (
          <option key={key} value={key}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The project roles of one member, each with a way to take it away. */
function RolesOf({ member }: { member: Member }) {
  const roles = useQuery({
    queryKey: ['project-roles', member.id],
    queryFn: () => api<{ projectRoles: ProjectRoleEntry[] }>('GET', `/users/${encodeURIComponent(member.id)}/project-roles`),
  });
  const remove = useMutation({
    mutationFn: (projectKey: string) => api('DELETE', `/users/${encodeURIComponent(member.id)}/project-roles/${encodeURIComponent(projectKey)}`),
  });
  if (!roles.data || roles.data.projectRoles.length === 0) return null;
  return (
    <li>
      {member.email}:{' '}
      {roles.data.projectRoles.map((r) => (
        <span key={r.projectKey} className="tag">
          {r.projectName} ({r.role}){' '}
          <button type="button" className="small danger-text" onClick={() => remove.mutate(r.projectKey)} disabled={remove.isPending}>
            Remove <span className="sr-only">{`${member.email}'s role on ${r.projectName}`}</span>
          </button>{' '}
        </span>
      ))}
      <ErrorMessage error={remove.error} />
    </li>
  );
}

/** Owners: give a member a role on one project, and see and remove the roles given. */
export function ProjectRolesSection({ members }: { members: Member[] }) {
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => api<{ projects: Project[] }>('GET', '/projects') });
  const [memberId, setMemberId] = useState('');
  const [projectKey, setProjectKey] = useState('');
  const [role, setRole] = useState<ProjectRole>('viewer');
  const give = useMutation({
    mutationFn: (to: { member: string; project: string }) =>
      api('PUT', `/users/${encodeURIComponent(to.member)}/project-roles/${encodeURIComponent(to.project)}`, { role }),
  });
  const list = projects.data?.projects ?? [];
  const chosenMember = memberId || members[0]?.id || '';
  const chosenProject = projectKey || list[0]?.key || '';
  return (
    <Section title="Roles on single projects">
      <p className="muted">A member with the role “Projects only” sees nothing but the projects given here; others get these roles on top of theirs.</p>
      <form
        className="card"
        aria-label="Give a project role"
        onSubmit={(event: FormEvent) => {
          event.preventDefault();
          give.mutate({ member: chosenMember, project: chosenProject });
        }}
      >
        <Select label="Member" value={chosenMember} options={members.map((m) => [m.id, m.email] as [string, string])} onChange={setMemberId} />
        <Select label="Project" value={chosenProject} options={list.map((p) => [p.key, p.name] as [string, string])} onChange={setProjectKey} />
        <Select label="Project role" value={role} options={Object.entries(PROJECT_ROLE_TEXT) as Array<[ProjectRole, string]>} onChange={setRole} />
        <ErrorMessage error={give.error ?? projects.error} />
        <button type="submit" disabled={give.isPending || !chosenMember || !chosenProject}>
          Give project role
        </button>
      </form>
      <ul>
        {members.map((m) => (
          <RolesOf key={m.id} member={m} />
        ))}
      </ul>
    </Section>
  );
}
