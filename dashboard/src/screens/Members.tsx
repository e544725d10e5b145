import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { api, type Invitation, type Member, type Role } from '../api.ts';
import { useSession } from '../session.ts';
import { Checkbox, CopyButton, ErrorMessage, Field, formatDate, Loading, Section, Table } from '../ui.tsx';
import { ProjectRolesSection } from './ProjectRoles.tsx';

const ROLE_TEXT: Record<Role, string> = {
  owner: 'Owner: everything, including members',
  editor: 'Editor: flags, environments, forms, submissions, API keys',
  viewer: 'Viewer: read-only, no secrets',
  none: 'Projects only: the projects given below',
};

function RoleSelect({ label, value, onChange }: { label: string; value: Role; onChange: (role: Role) => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as Role)}>
        {(Object.keys(ROLE_TEXT) as Role[]).map((role) => (
          <option key={role} value={role}>
            {ROLE_TEXT[role]}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Owners: the members, their roles, invitations, and whether viewers may read submissions. */
export function MembersScreen() {
  const session = useSession();
  const users = useQuery({ queryKey: ['users'], queryFn: () => api<{ users: Member[] }>('GET', '/users') });
  const invitations = useQuery({ queryKey: ['invitations'], queryFn: () => api<{ invitations: Invitation[] }>('GET', '/invitations') });
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => api<{ viewersSeeSubmissions: boolean }>('GET', '/settings') });
  const changeRole = useMutation({ mutationFn: ({ id, role }: { id: string; role: Role }) => api('PATCH', `/users/${encodeURIComponent(id)}`, { role }) });
  const remove = useMutation({ mutationFn: (id: string) => api('DELETE', `/users/${encodeURIComponent(id)}`) });
  const revoke = useMutation({ mutationFn: (id: string) => api('DELETE', `/invitations/${encodeURIComponent(id)}`) });
  const saveSettings = useMutation({ mutationFn: (value: boolean) => api('PATCH', '/settings', { viewersSeeSubmissions: value }) });
  if (users.isPending) return <Loading what="the members" />;
  if (users.error) return <ErrorMessage error={users.error} />;
  return (
    <>
      <h1>Members</h1>
      {session.data?.user === null && <CreateOwner />}
      <Invite />
      <Section title="Members">
        <ErrorMessage error={changeRole.error ?? remove.error} />
        <Table>
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Since</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.data.users.map((user) => (
              <tr key={user.id}>
                <th scope="row">{user.email}</th>
                <td>
                  <RoleSelect label={`Role of ${user.email}`} value={user.role} onChange={(role) => changeRole.mutate({ id: user.id, role })} />
                </td>
                <td>{formatDate(user.createdAt)}</td>
                <td>
                  {user.id !== session.data?.user?.id && (
                    <button type="button" className="small danger-text" onClick={() => remove.mutate(user.id)} disabled={remove.isPending}>
                      Remove <span className="sr-only">{user.email}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      </Section>
      <ProjectRolesSection members={users.data.users} />
      <Section title="Open invitations">
        <ErrorMessage error={invitations.error ?? revoke.error} />
        {invitations.data && invitations.data.invitations.length === 0 && <p className="muted">No open invitation.</p>}
        <ul className="plain">
          {invitations.data?.invitations.map((inv) => (
            <li key={inv.id}>
              {inv.email} as {inv.role}, until {formatDate(inv.expiresAt)}{' '}
              <button type="button" className="small" onClick={() => revoke.mutate(inv.id)}>
                Revoke <span className="sr-only">the invitation of {inv.email}</span>
              </button>
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Viewers">
        {settings.data && (
          <Checkbox label="Viewers may read form submissions" checked={settings.data.viewersSeeSubmissions} onChange={(value) => saveSettings.mutate(value)} />
        )}
        <ErrorMessage error={settings.error ?? saveSettings.error} />
      </Section>
    </>
  );
}

function Invite() {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('editor');
  const invite = useMutation({
    mutationFn: () => api<Invitation>('POST', '/invitations', { email: email.trim(), role }),
    onSuccess: () => setEmail(''),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate();
  };
  return (
    <Section title="Invite a member">
      <form onSubmit={submit} className="inline">
        <Field label="E-mail address" type="email" value={email} onChange={setEmail} required autoComplete="off" />
        <RoleSelect label="Role" value={role} onChange={setRole} />
        <button type="submit" className="primary" disabled={invite.isPending}>
          {invite.isPending ? 'Inviting…' : 'Invite'}
        </button>
      </form>
      <ErrorMessage error={invite.error} />
      {invite.data?.url && (
        <div role="status" className="notice">
          <p>
            Send this link to {invite.data.email}. It works once, until {formatDate(invite.data.expiresAt)}, and is not shown again.
          </p>
          <div className="field">
            <label htmlFor="invitation-link">Invitation link</label>
            <input id="invitation-link" readOnly value={invite.data.url} />
          </div>
          <CopyButton text={invite.data.url} label="Copy link" />
        </div>
      )}
    </Section>
  );
}

/** With the admin token: an owner account made directly (the first member, typically your own). */
function CreateOwner() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const create = useMutation({
    mutationFn: () => api<Member>('POST', '/users', { email: email.trim(), password, role: 'owner' }),
    onSuccess: () => {
      setEmail('');
      setPassword('');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <Section title="Create an owner account">
      <p className="muted">
        You are signed in with the admin token. Create your own account here, then sign out and sign in with it: your changes then carry your name in the
        history.
      </p>
      <form onSubmit={submit} className="inline">
        <Field label="Owner e-mail address" type="email" value={email} onChange={setEmail} required autoComplete="off" />
        <Field
          label="Owner password"
          type="password"
          value={password}
          onChange={setPassword}
          required
          autoComplete="new-password"
          hint="10 to 200 characters"
        />
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create owner'}
        </button>
      </form>
      <ErrorMessage error={create.error} />
      {create.isSuccess && <p role="status">Owner {create.data.email} created.</p>}
    </Section>
  );
}
