import { useMutation, useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { api } from '../api.ts';
import { Button, ConfirmDialog, CopyButton, DateText, ErrorMessage, Section, Table, toast } from '../ui/index.ts';
import { useCanWrite } from '../session.ts';

interface SyncToken {
  configured: boolean;
  prefix: string | null;
  createdAt: string | null;
  token?: string;
  selector?: string;
}

/** Sync tokens of flagd in-process providers, one per environment (docs/adr/0027-flagd-sync.md). */
export function FlagdSyncTokens({ projectKey, environments }: { projectKey: string; environments: Array<{ key: string; name: string }> }) {
  const [created, setCreated] = useState<{ environment: string; selector: string } | undefined>();
  const selectorId = useId();
  return (
    <Section title="Local evaluation (flagd)">
      <p className="muted">
        flagd in-process providers read an environment's flags from Flagpost's flagd sync port (FLAGPOST_FLAGD_SYNC_PORT) with the environment's sync token as
        their selector. A token is shown once, when it is created; creating another one disconnects providers using the old one.
      </p>
      {created && (
        <div className="notice" role="status">
          <div className="field">
            <label htmlFor={selectorId}>Selector for {created.environment}</label>
            <input id={selectorId} readOnly value={created.selector} />
          </div>
          <CopyButton text={created.selector} label="Copy selector" /> <strong>Shown once:</strong> store it now.
        </div>
      )}
      <Table label="Sync tokens">
        <thead>
          <tr>
            <th scope="col">Environment</th>
            <th scope="col">Sync token</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {environments.map((e) => (
            <SyncTokenRow key={e.key} projectKey={projectKey} environment={e} onCreated={(selector) => setCreated({ environment: e.name, selector })} />
          ))}
        </tbody>
      </Table>
    </Section>
  );
}

function SyncTokenRow({
  projectKey,
  environment,
  onCreated,
}: {
  projectKey: string;
  environment: { key: string; name: string };
  onCreated: (selector: string) => void;
}) {
  const canWrite = useCanWrite();
  const [revoking, setRevoking] = useState(false);
  const url = `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(environment.key)}/flagd-sync-token`;
  const key = ['flagd-sync-token', projectKey, environment.key];
  const token = useQuery({ queryKey: key, queryFn: () => api<SyncToken>('GET', url) });
  const rotate = useMutation({
    mutationFn: () => api<SyncToken>('POST', url),
    meta: { error: 'Token not created', invalidates: [key, ['audit']] },
    onSuccess: (answer) => {
      toast.success(`${token.data?.configured ? 'Rotated' : 'Created'} the sync token of ${environment.name}`);
      if (answer.selector) onCreated(answer.selector);
    },
  });
  const revoke = useMutation({
    mutationFn: () => api('DELETE', url),
    meta: { error: false, invalidates: [key, ['audit']] },
    onSuccess: () => {
      toast.success(`Revoked the sync token of ${environment.name}`);
      setRevoking(false);
    },
  });
  return (
    <tr>
      <th scope="row">{environment.name}</th>
      <td>
        {token.data?.configured ? (
          <>
            <code>{token.data.prefix}…</code> created <DateText iso={token.data.createdAt} />
          </>
        ) : (
          token.data && <span className="muted">None</span>
        )}
        <ErrorMessage error={token.error} />
      </td>
      <td>
        <div className="actions">
          <Button size="small" busy={rotate.isPending} disabled={!canWrite} onClick={() => rotate.mutate()}>
            {token.data?.configured ? `Rotate token of ${environment.name}` : `Create token for ${environment.name}`}
          </Button>
          {token.data?.configured && (
            <Button size="small" variant="danger-text" disabled={!canWrite} onClick={() => setRevoking(true)}>
              Revoke token of {environment.name}
            </Button>
          )}
        </div>
        <ConfirmDialog
          open={revoking}
          title={`Revoke the sync token of ${environment.name}?`}
          confirmLabel="Revoke sync token"
          pendingLabel="Revoking…"
          onConfirm={() => revoke.mutate()}
          onCancel={() => {
            revoke.reset();
            setRevoking(false);
          }}
          pending={revoke.isPending}
          error={revoke.error}
        >
          <p>flagd providers using it are disconnected and keep the flags they last read. This cannot be undone.</p>
        </ConfirmDialog>
      </td>
    </tr>
  );
}
