import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Invitation, type Member, type Role } from '../api.ts';
import { useSession } from '../session.ts';
import {
  Button,
  ConfirmDialog,
  CopyButton,
  DateText,
  EmptyState,
  ErrorMessage,
  Field,
  Loading,
  problemsOf,
  ProblemsProvider,
  rules,
  Section,
  Select,
  Switch,
  Table,
  toast,
} from '../ui/index.ts';
import { ProjectRolesSection } from './ProjectRoles.tsx';

const ROLE_TEXT: Record<Role, string> = {
  owner: 'Owner: everything, including members',
  editor: 'Editor: flags, environments, forms, submissions, API keys',
  viewer: 'Viewer: read-only, no secrets',
  none: 'Projects only: the projects given below',
};

function RoleSelect({
  label,
  value,
  onChange,
  path,
  disabled,
}: {
  label: string;
  value: Role;
  onChange: (role: Role) => void;
  path?: string;
  disabled?: boolean;
}) {
  return (
    <Select label={label} value={value} path={path} onChange={(v) => onChange(v as Role)} disabled={disabled}>
      {(Object.keys(ROLE_TEXT) as Role[]).map((role) => (
        <option key={role} value={role}>
          {ROLE_TEXT[role]}
        </option>
      ))}
    </Select>
  );
}

const passwordRule = (v: string) => rules.minLength(10)(v) ?? (v.length > 200 ? 'Use at most 200 characters' : undefined);

/** Owners: the members, their roles, invitations, and whether viewers may read submissions. */
export function MembersScreen() {
  const session = useSession();
  const client = useQueryClient();
  const users = useQuery({ queryKey: ['users'], queryFn: () => api<{ users: Member[] }>('GET', '/users') });
  const [removing, setRemoving] = useState<Member | null>(null);
  const changeRole = useMutation({
    mutationFn: ({ id, role }: { id: string; role: Role }) => api('PATCH', `/users/${encodeURIComponent(id)}`, { role }),
    meta: { error: 'Role not changed', invalidates: [['users'], ['audit']] },
    onSuccess: async (_data, { id, role }) => {
      const email = users.data?.users.find((u) => u.id === id)?.email ?? 'the member';
      toast.success(`${email} is now ${role === 'none' ? 'limited to single projects' : `${role === 'owner' ? 'an' : 'a'} ${role}`}`);
      // One's own role is part of the session.
      if (id === session.data?.user?.id) await client.invalidateQueries({ queryKey: ['session'] });
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => api('DELETE', `/users/${encodeURIComponent(id)}`),
    meta: { error: false, invalidates: [['users'], ['project-roles'], ['audit']] },
    onSuccess: () => {
      toast.success(`Removed ${removing?.email ?? 'the member'}`);
      setRemoving(null);
    },
  });
  if (users.isPending) return <Loading what="the members" />;
  if (users.error) return <ErrorMessage error={users.error} />;
  return (
    <>
      <h1>Members</h1>
      {session.data?.user === null && <CreateOwner />}
      <Invite />
      <Section title="Members">
        {users.data.users.length === 0 ? (
          <EmptyState title="No member yet">Create the first owner account above, or invite people by e-mail.</EmptyState>
        ) : (
          <Table label="Members">
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
                    {/* In a table the column names the select: no visible label (the system's Select always has one). */}
                    <select
                      aria-label={`Role of ${user.email}`}
                      value={user.role}
                      disabled={changeRole.isPending && changeRole.variables?.id === user.id}
                      onChange={(e) => changeRole.mutate({ id: user.id, role: e.target.value as Role })}
                    >
                      {(Object.keys(ROLE_TEXT) as Role[]).map((role) => (
                        <option key={role} value={role}>
                          {ROLE_TEXT[role]}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>
                    <DateText iso={user.createdAt} />
                  </td>
                  <td>
                    {user.id !== session.data?.user?.id && (
                      <Button size="small" variant="danger-text" onClick={() => setRemoving(user)}>
                        Remove <span className="sr-only">{user.email}</span>
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        <ConfirmDialog
          open={removing !== null}
          title={`Remove ${removing?.email ?? ''}?`}
          confirmLabel="Remove member"
          pendingLabel="Removing…"
          onConfirm={() => removing && remove.mutate(removing.id)}
          onCancel={() => {
            remove.reset();
            setRemoving(null);
          }}
          pending={remove.isPending}
          error={remove.error}
        >
          <p>They are signed out and their access tokens stop working. Their changes stay in the history under their name.</p>
        </ConfirmDialog>
      </Section>
      <ProjectRolesSection members={users.data.users} />
      <Invitations />
      <Viewers />
    </>
  );
}

function Invitations() {
  const invitations = useQuery({ queryKey: ['invitations'], queryFn: () => api<{ invitations: Invitation[] }>('GET', '/invitations') });
  const [revoking, setRevoking] = useState<Invitation | null>(null);
  const revoke = useMutation({
    mutationFn: (id: string) => api('DELETE', `/invitations/${encodeURIComponent(id)}`),
    meta: { error: false, invalidates: [['invitations'], ['audit']] },
    onSuccess: () => {
      toast.success(`Revoked the invitation of ${revoking?.email ?? ''}`.trim());
      setRevoking(null);
    },
  });
  return (
    <Section title="Open invitations">
      {invitations.isPending && <Loading what="the invitations" />}
      <ErrorMessage error={invitations.error} />
      {invitations.data && invitations.data.invitations.length === 0 && <p className="muted">No open invitation.</p>}
      {invitations.data && invitations.data.invitations.length > 0 && (
        <ul className="plain">
          {invitations.data.invitations.map((inv) => (
            <li key={inv.id}>
              {inv.email} as {inv.role}, until <DateText iso={inv.expiresAt} />{' '}
              <Button size="small" variant="danger-text" onClick={() => setRevoking(inv)}>
                Revoke <span className="sr-only">the invitation of {inv.email}</span>
              </Button>
            </li>
          ))}
        </ul>
      )}
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke the invitation of ${revoking?.email ?? ''}?`}
        confirmLabel="Revoke invitation"
        pendingLabel="Revoking…"
        onConfirm={() => revoking && revoke.mutate(revoking.id)}
        onCancel={() => {
          revoke.reset();
          setRevoking(null);
        }}
        pending={revoke.isPending}
        error={revoke.error}
      >
        <p>The link stops working. You can invite the same address again.</p>
      </ConfirmDialog>
    </Section>
  );
}

/** Whether viewers may read submissions: an optimistic switch, put back if the server refuses. */
function Viewers() {
  const client = useQueryClient();
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => api<{ viewersSeeSubmissions: boolean }>('GET', '/settings') });
  const save = useMutation({
    mutationFn: (value: boolean) => api('PATCH', '/settings', { viewersSeeSubmissions: value }),
    meta: { error: 'Not saved', invalidates: [['settings'], ['audit']] },
    onMutate: async (value) => {
      await client.cancelQueries({ queryKey: ['settings'] });
      const before = client.getQueryData<{ viewersSeeSubmissions: boolean }>(['settings']);
      client.setQueryData(['settings'], { ...before, viewersSeeSubmissions: value });
      return { before };
    },
    onError: (_error, _value, context) => {
      if (context?.before) client.setQueryData(['settings'], context.before);
    },
    onSuccess: (_data, value) => toast.success(value ? 'Viewers may read submissions' : 'Viewers no longer read submissions'),
  });
  return (
    <Section title="Viewers">
      {settings.isPending && <Loading what="the settings" />}
      <ErrorMessage error={settings.error} />
      {settings.data && (
        <Switch
          label="Viewers may read form submissions"
          checked={settings.data.viewersSeeSubmissions}
          onChange={(value) => save.mutate(value)}
          hint="Submissions hold personal data: leave this off unless viewers need them."
        />
      )}
    </Section>
  );
}

function Invite() {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('editor');
  // A new form after each invitation: the emptied field is not "touched", so it is not marked Required.
  const [round, setRound] = useState(0);
  const invite = useMutation({
    mutationFn: () => api<Invitation>('POST', '/invitations', { email: email.trim(), role }),
    meta: { error: false, invalidates: [['invitations'], ['audit']] },
    onSuccess: () => {
      setEmail('');
      setRound((n) => n + 1);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!rules.required(email) && !rules.email(email)) invite.mutate();
  };
  return (
    <Section title="Invite a member">
      <ProblemsProvider value={problemsOf(invite.error)}>
        <form key={round} onSubmit={submit} className="inline" aria-label="Invite a member">
          <Field
            label="E-mail address"
            type="email"
            path="email"
            value={email}
            onChange={setEmail}
            validate={(v) => rules.required(v) ?? rules.email(v)}
            required
            autoComplete="off"
          />
          <RoleSelect label="Role" path="role" value={role} onChange={setRole} />
          <Button type="submit" variant="primary" busy={invite.isPending} busyText="Inviting…">
            Invite
          </Button>
        </form>
      </ProblemsProvider>
      <ErrorMessage error={invite.error} inline={['email', 'role']} />
      {invite.data?.url && (
        <div role="status" className="notice">
          <p>
            Send this link to {invite.data.email}. It works once, until <DateText iso={invite.data.expiresAt} />, and is not shown again.
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
    meta: { error: false, invalidates: [['users'], ['audit']] },
    onSuccess: (member) => {
      toast.success(`Owner ${member.email} created.`);
      setEmail('');
      setPassword('');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!rules.email(email) && !passwordRule(password)) create.mutate();
  };
  return (
    <Section title="Create an owner account">
      <p className="muted">
        You are signed in with the admin token. Create your own account here, then sign out and sign in with it: your changes then carry your name in the
        history.
      </p>
      <ProblemsProvider value={problemsOf(create.error)}>
        <form onSubmit={submit} className="inline" aria-label="Create an owner account">
          <Field label="Owner e-mail address" type="email" path="email" value={email} onChange={setEmail} validate={rules.email} required autoComplete="off" />
          <Field
            label="Owner password"
            type="password"
            path="password"
            value={password}
            onChange={setPassword}
            validate={passwordRule}
            required
            autoComplete="new-password"
            hint="10 to 200 characters"
          />
          <Button type="submit" variant="primary" busy={create.isPending} busyText="Creating…">
            Create owner
          </Button>
        </form>
      </ProblemsProvider>
      <ErrorMessage error={create.error} inline={['email', 'password']} />
      {create.isSuccess && <p className="muted">Next: sign out, then sign in as {create.data.email}.</p>}
    </Section>
  );
}
