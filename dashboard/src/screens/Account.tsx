import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { type AccessToken, api } from '../api.ts';
import { useSession } from '../session.ts';
import { CopyButton, ErrorMessage, Field, formatDate, Loading, Section } from '../ui.tsx';

/** A member's own account: their password and personal access tokens. */
export function AccountScreen() {
  const session = useSession();
  if (session.isPending) return <Loading what="your account" />;
  if (session.error) return <ErrorMessage error={session.error} />;
  if (!session.data.user)
    return (
      <>
        <h1>Account</h1>
        <p>You are signed in with the admin token, which has no account. Create members under Members.</p>
      </>
    );
  return (
    <>
      <h1>Account</h1>
      <p>
        {session.data.user.email}, {session.data.role}.
      </p>
      <ChangePassword />
      <Tokens />
    </>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const change = useMutation({
    mutationFn: () => api('POST', '/me/password', { currentPassword: current, newPassword: next }),
    onSuccess: () => {
      setCurrent('');
      setNext('');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate();
  };
  return (
    <Section title="Password">
      <form onSubmit={submit}>
        <Field label="Current password" type="password" value={current} onChange={setCurrent} required autoComplete="current-password" />
        <Field label="New password" type="password" value={next} onChange={setNext} required autoComplete="new-password" hint="10 to 200 characters" />
        <ErrorMessage error={change.error} />
        <button type="submit" className="primary" disabled={change.isPending}>
          {change.isPending ? 'Changing…' : 'Change password'}
        </button>
        {change.isSuccess && (
          <span role="status" className="muted">
            {' '}
            Password changed; your other sessions and your access tokens ended.
          </span>
        )}
      </form>
    </Section>
  );
}

/** Lifetimes offered for a new token; the server takes 1 to 365 days, 90 when none is given. */
const LIFETIMES = [7, 30, 90, 180, 365] as const;

function Tokens() {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [days, setDays] = useState<number>(90);
  const lifetimeId = useId();
  const tokens = useQuery({ queryKey: ['tokens'], queryFn: () => api<{ tokens: AccessToken[] }>('GET', '/me/tokens') });
  const create = useMutation({
    mutationFn: () => api<AccessToken>('POST', '/me/tokens', { name: name.trim(), password, expiresInDays: days }),
    onSuccess: () => {
      setName('');
      setPassword('');
    },
  });
  const revoke = useMutation({ mutationFn: (id: string) => api('DELETE', `/me/tokens/${encodeURIComponent(id)}`) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const now = Date.now();
  return (
    <Section title="Personal access tokens">
      <p className="muted">
        For scripts and automation: <code>Authorization: Bearer fpt_…</code> on the admin API, acting with your role. Tokens expire, and end when your password
        changes.
      </p>
      <form onSubmit={submit} className="inline">
        <Field label="Token name" value={name} onChange={setName} required />
        <div className="field">
          <label htmlFor={lifetimeId}>Expires after</label>
          <select id={lifetimeId} value={days} onChange={(e) => setDays(Number(e.target.value))}>
            {LIFETIMES.map((d) => (
              <option key={d} value={d}>
                {d} days
              </option>
            ))}
          </select>
        </div>
        <Field label="Your password" type="password" value={password} onChange={setPassword} required autoComplete="current-password" />
        <button type="submit" className="primary" disabled={create.isPending}>
          Create token
        </button>
      </form>
      <ErrorMessage error={create.error ?? revoke.error ?? tokens.error} />
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
      <ul className="plain">
        {tokens.data?.tokens.map((t) => (
          <li key={t.id}>
            {t.name} <code>{t.tokenPrefix}…</code>, created {formatDate(t.createdAt)}
            {t.lastUsedAt ? `, last used ${formatDate(t.lastUsedAt)}` : ', never used'}
            {t.expiresAt && Date.parse(t.expiresAt) > now ? `, expires ${formatDate(t.expiresAt)}` : ', expired'}{' '}
            <button type="button" className="small" onClick={() => revoke.mutate(t.id)}>
              Revoke <span className="sr-only">{t.name}</span>
            </button>
          </li>
        ))}
      </ul>
    </Section>
  );
}
