import { useMutation, useQueries, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Member, type Project } from '../api.ts';
import { Badge, Button, EmptyState, ErrorMessage, Loading, problemsOf, ProblemsProvider, Section, Select, Table } from '../ui/index.ts';

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

const rolesKey = (memberId: string) => ['project-roles', memberId];
const rolesOf = (memberId: string) => () => api<{ projectRoles: ProjectRoleEntry[] }>('GET', `/users/${encodeURIComponent(memberId)}/project-roles`);

/** One role of one member on one project, with a way to take it away. */
function RoleRow({ member, entry }: { member: Member; entry: ProjectRoleEntry }) {
  const remove = useMutation({
    mutationFn: () => api('DELETE', `/users/${encodeURIComponent(member.id)}/project-roles/${encodeURIComponent(entry.projectKey)}`),
    meta: { success: `Removed ${member.email}'s role on ${entry.projectName}`, error: 'Not removed', invalidates: [rolesKey(member.id), ['audit']] },
  });
  return (
    <tr>
      <th scope="row">{member.email}</th>
      <td>{entry.projectName}</td>
      <td>
        <Badge tone={entry.role === 'admin' ? 'warn' : undefined}>{entry.role}</Badge>
      </td>
      <td>
        <Button size="small" variant="danger-text" onClick={() => remove.mutate()} busy={remove.isPending} busyText="Removing…">
          Remove <span className="sr-only">{`${member.email}'s role on ${entry.projectName}`}</span>
        </Button>
      </td>
    </tr>
  );
}

/** Owners: give a member a role on one project, and see and remove the roles given. */
export function ProjectRolesSection({ members }: { members: Member[] }) {
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => api<{ projects: Project[] }>('GET', '/projects') });
  const roles = useQueries({ queries: members.map((m) => ({ queryKey: rolesKey(m.id), queryFn: rolesOf(m.id) })) });
  const [memberId, setMemberId] = useState('');
  const [projectKey, setProjectKey] = useState('');
  const [role, setRole] = useState<ProjectRole>('viewer');
  const list = projects.data?.projects ?? [];
  const chosenMember = memberId || members[0]?.id || '';
  const chosenProject = projectKey || list[0]?.key || '';
  const give = useMutation({
    mutationFn: (to: { member: string; project: string }) =>
      api('PUT', `/users/${encodeURIComponent(to.member)}/project-roles/${encodeURIComponent(to.project)}`, { role }),
    // The mutation starts from this render, so its member is the chosen one.
    meta: { success: 'Gave the project role', error: false, invalidates: [rolesKey(chosenMember), ['audit']] },
  });
  const given = members.flatMap((member, i) => (roles[i]?.data?.projectRoles ?? []).map((entry) => ({ member, entry })));
  const loading = roles.some((r) => r.isPending);
  const failed = roles.find((r) => r.error)?.error;
  return (
    <Section title="Roles on single projects">
      <p className="muted">A member with the role “Projects only” sees nothing but the projects given here; others get these roles on top of theirs.</p>
      {members.length === 0 || list.length === 0 ? (
        <p className="muted">Roles on single projects need a member and a project.</p>
      ) : (
        <ProblemsProvider value={problemsOf(give.error)}>
          <form
            className="inline"
            aria-label="Give a project role"
            onSubmit={(event: FormEvent) => {
              event.preventDefault();
              give.mutate({ member: chosenMember, project: chosenProject });
            }}
          >
            <Select label="Member" value={chosenMember} onChange={setMemberId}>
              {members.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.email}
                </option>
              ))}
            </Select>
            <Select label="Project" value={chosenProject} onChange={setProjectKey}>
              {list.map((p) => (
                <option key={p.key} value={p.key}>
                  {p.name}
                </option>
              ))}
            </Select>
            <Select label="Project role" path="role" value={role} onChange={(v) => setRole(v as ProjectRole)}>
              {(Object.entries(PROJECT_ROLE_TEXT) as Array<[ProjectRole, string]>).map(([key, text]) => (
                <option key={key} value={key}>
                  {text}
                </option>
              ))}
            </Select>
            <Button type="submit" busy={give.isPending} busyText="Giving…" disabled={!chosenMember || !chosenProject}>
              Give project role
            </Button>
          </form>
        </ProblemsProvider>
      )}
      <ErrorMessage error={give.error ?? projects.error ?? failed} inline={['role']} />
      {loading && <Loading what="the project roles" />}
      {!loading && given.length === 0 && members.length > 0 && (
        <EmptyState title="No role on a single project">Every member works with their instance-wide role.</EmptyState>
      )}
      {given.length > 0 && (
        <Table label="Roles on single projects">
          <thead>
            <tr>
              <th scope="col">Member</th>
              <th scope="col">Project</th>
              <th scope="col">Role</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {given.map(({ member, entry }) => (
              <RoleRow key={`${member.id}:${entry.projectKey}`} member={member} entry={entry} />
            ))}
          </tbody>
        </Table>
      )}
    </Section>
  );
}
