import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { type AccessToken, api } from '../api.ts';
import { useSession } from '../session.ts';
import {
  Badge,
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
  Table,
  toast,
} from '../ui/index.ts';

/** A member's own account: their password and personal access tokens. */
export function AccountScreen() {
  const session = useSession();
  if (session.isPending) return <Loading what="your account" />;
  if (session.error) return <ErrorMessage error={session.error} />;
  if (!session.data.user)
    return (
      <>
        <h1>Account</h1>
        <EmptyState title="Signed in with the admin token">
          The admin token has no account of its own. Create members (your own owner account first) under Members, then sign in with it.
        </EmptyState>
      </>
    );
  return (
    <>
      <h1>Account</h1>
      <p>
        {session.data.user.email} <Badge>{session.data.role}</Badge>
      </p>
      <ChangePassword />
      <Tokens />
    </>
  );
}

const passwordRule = (v: string) => rules.minLength(10)(v) ?? (v.length > 200 ? 'Use at most 200 characters' : undefined);

function ChangePassword() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const change = useMutation({
    mutationFn: () => api('POST', '/me/password', { currentPassword: current, newPassword: next }),
    // A new password ends the member's access tokens (and other sessions).
    meta: { success: 'Changed your password; your other sessions and your access tokens ended', error: false, invalidates: [['tokens'], ['audit']] },
    onSuccess: () => {
      setCurrent('');
      setNext('');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!passwordRule(next)) change.mutate();
  };
  return (
    <Section title="Password">
      <ProblemsProvider value={problemsOf(change.error)}>
        <form onSubmit={submit} className="stack" aria-label="Change password">
          <Field
            label="Current password"
            type="password"
            path="currentPassword"
            value={current}
            onChange={setCurrent}
            required
            autoComplete="current-password"
          />
          <Field
            label="New password"
            type="password"
            path="newPassword"
            value={next}
            onChange={setNext}
            validate={passwordRule}
            required
            autoComplete="new-password"
            hint="10 to 200 characters"
          />
          <ErrorMessage error={change.error} inline={['currentPassword', 'newPassword']} />
          <Button type="submit" variant="primary" busy={change.isPending} busyText="Changing…">
            Change password
          </Button>
        </form>
      </ProblemsProvider>
    </Section>
  );
}

/** Lifetimes offered for a new token; the server takes 1 to 365 days, 90 when none is given. */
const LIFETIMES = [7, 30, 90, 180, 365] as const;

function Tokens() {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [days, setDays] = useState('90');
  const [revoking, setRevoking] = useState<AccessToken | null>(null);
  const tokens = useQuery({ queryKey: ['tokens'], queryFn: () => api<{ tokens: AccessToken[] }>('GET', '/me/tokens') });
  const create = useMutation({
    mutationFn: () => api<AccessToken>('POST', '/me/tokens', { name: name.trim(), password, expiresInDays: Number(days) }),
    meta: { success: 'Created the token', error: false, invalidates: [['tokens'], ['audit']] },
    onSuccess: () => {
      setName('');
      setPassword('');
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => api('DELETE', `/me/tokens/${encodeURIComponent(id)}`),
    meta: { error: false, invalidates: [['tokens'], ['audit']] },
    onSuccess: () => {
      toast.success(`Revoked the token ${revoking?.name ?? ''}`.trim());
      setRevoking(null);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!rules.required(name)) create.mutate();
  };
  const now = Date.now();
  return (
    <Section title="Personal access tokens">
      <p className="muted">
        For scripts and automation: <code>Authorization: Bearer fpt_…</code> on the admin API, acting with your role. Tokens expire, and end when your password
        changes.
      </p>
      <ProblemsProvider value={problemsOf(create.error)}>
        <form onSubmit={submit} className="inline" aria-label="Create an access token">
          <Field label="Token name" path="name" value={name} onChange={setName} validate={rules.required} required />
          <Select label="Expires after" path="expiresInDays" value={days} onChange={setDays}>
            {LIFETIMES.map((d) => (
              <option key={d} value={String(d)}>
                {d} days
              </option>
            ))}
          </Select>
          <Field label="Your password" type="password" path="password" value={password} onChange={setPassword} required autoComplete="current-password" />
          <Button type="submit" variant="primary" busy={create.isPending} busyText="Creating…">
            Create token
          </Button>
        </form>
      </ProblemsProvider>
      <ErrorMessage error={create.error} inline={['name', 'expiresInDays', 'password']} />
      {create.data?.token && (
        <div role="status" className="notice">
          <p>Copy the token now: it is not shown again.</p>
          <div className="field">
            <label htmlFor="new-access-token">New access token</label>
            <input id="new-access-token" readOnly value={create.data.token} />
          </div>
          <CopyButton text={create.data.token} label="Copy token" />
        </div>
      )}
      {tokens.isPending && <Loading what="your tokens" />}
      <ErrorMessage error={tokens.error} />
      {tokens.data && tokens.data.tokens.length === 0 && <EmptyState title="No access token">Create one above for a script or a CI job.</EmptyState>}
      {tokens.data && tokens.data.tokens.length > 0 && (
        <Table label="Your access tokens">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Token</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.data.tokens.map((t) => (
              <tr key={t.id}>
                <th scope="row">{t.name}</th>
                <td>
                  <code>{t.tokenPrefix}…</code>
                </td>
                <td>
                  <DateText iso={t.createdAt} />
                </td>
                <td>{t.lastUsedAt ? <DateText iso={t.lastUsedAt} /> : <span className="muted">Never</span>}</td>
                <td>{t.expiresAt && Date.parse(t.expiresAt) > now ? <DateText iso={t.expiresAt} /> : <Badge tone="warn">Expired</Badge>}</td>
                <td>
                  <Button size="small" variant="danger-text" onClick={() => setRevoking(t)}>
                    Revoke <span className="sr-only">{t.name}</span>
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke the token ${revoking?.name ?? ''}?`}
        confirmLabel="Revoke token"
        pendingLabel="Revoking…"
        onConfirm={() => revoking && revoke.mutate(revoking.id)}
        onCancel={() => {
          revoke.reset();
          setRevoking(null);
        }}
        pending={revoke.isPending}
        error={revoke.error}
      >
        <p>Scripts using it are refused from now on. This cannot be undone.</p>
      </ConfirmDialog>
    </Section>
  );
}
