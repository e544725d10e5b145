import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { api, type Form, type ReadToken } from '../api.ts';
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
  Table,
} from '../ui/index.ts';
import { useCanWrite } from '../session.ts';

// Issue 34: read-only tokens of one form for integrations (a CRM sync, Zapier): they read the form's
// submissions and exports and nothing else. The token is shown once, when it is made.

export function ReadTokensSection({ form }: { form: Form }) {
  const canWrite = useCanWrite();
  const path = `/forms/${encodeURIComponent(form.key)}/read-tokens`;
  const tokens = useQuery({ queryKey: ['read-tokens', form.key], queryFn: () => api<{ readTokens: ReadToken[] }>('GET', path), enabled: canWrite });
  const [name, setName] = useState('');
  const [made, setMade] = useState<ReadToken | undefined>();
  const [deleting, setDeleting] = useState<ReadToken | undefined>();
  const tokenId = useId();
  const create = useMutation({
    mutationFn: () => api<ReadToken>('POST', path, { name: name.trim() }),
    meta: { success: 'Created the read token', error: false, invalidates: [['read-tokens', form.key], ['audit']] },
    onSuccess: (token) => {
      setMade(token);
      setName('');
    },
  });
  const remove = useMutation({
    mutationFn: (token: ReadToken) => api('DELETE', `${path}/${encodeURIComponent(token.id)}`),
    meta: { success: 'Deleted the read token', error: false, invalidates: [['read-tokens', form.key], ['audit']] },
    onSuccess: () => setDeleting(undefined),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!rules.required(name)) create.mutate();
  };
  if (!canWrite) return null;
  return (
    <Section title="Read tokens">
      <p className="muted">
        For an integration: sent as <code>Authorization: Bearer …</code>, a token reads this form&apos;s submissions and exports, and nothing else.
      </p>
      {tokens.isPending && <Loading what="the read tokens" />}
      <ErrorMessage error={tokens.error} />
      {tokens.data && tokens.data.readTokens.length === 0 && <EmptyState title="No read token" />}
      {tokens.data && tokens.data.readTokens.length > 0 && (
        <Table label="Read tokens">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Starts with</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.data.readTokens.map((t) => (
              <tr key={t.id}>
                <th scope="row">{t.name}</th>
                <td>
                  <code>{t.tokenPrefix}</code>
                </td>
                <td>
                  <DateText iso={t.createdAt} />
                </td>
                <td>{t.lastUsedAt ? <DateText iso={t.lastUsedAt} /> : <span className="muted">never</span>}</td>
                <td>
                  <Button variant="danger-text" size="small" onClick={() => setDeleting(t)} aria-label={`Delete read token ${t.name}`}>
                    Delete
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {made?.token && (
        <div className="notice" role="status">
          <div className="field">
            <label htmlFor={tokenId}>Read token {made.name}</label>
            <input id={tokenId} readOnly value={made.token} />
          </div>
          <CopyButton text={made.token} label="Copy read token" /> <strong>Shown once:</strong> Flagpost keeps only its hash.
        </div>
      )}
      <ProblemsProvider value={problemsOf(create.error)}>
        <form onSubmit={submit} className="inline" aria-label="New read token">
          <Field label="Token name" path="name" value={name} onChange={setName} validate={rules.required} placeholder="CRM sync" required />
          <Button type="submit" busy={create.isPending} busyText="Creating…">
            Create read token
          </Button>
        </form>
      </ProblemsProvider>
      <ErrorMessage error={create.error} inline={['name']} />
      <ConfirmDialog
        open={deleting !== undefined}
        title={`Delete the read token ${deleting?.name ?? ''}?`}
        confirmLabel="Delete read token"
        onConfirm={() => deleting && remove.mutate(deleting)}
        onCancel={() => {
          remove.reset();
          setDeleting(undefined);
        }}
        pending={remove.isPending}
        error={remove.error}
      >
        <p>The integration that uses it is refused from its next request on.</p>
      </ConfirmDialog>
    </Section>
  );
}
