import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api } from '../api.ts';
import { useSession } from '../session.ts';
import { Button, Dialog, ErrorMessage, Field } from '../ui/index.ts';
import { useProject } from './Projects.tsx';

// Issue 31 item 4: a protected environment's flags are edited the normal way (the list's switch, Save, the
// targeting editor), and the edit becomes a change request for review, as LaunchDarkly and Flagsmith do.
// Owners may instead write it at once (?bypassProtection=true), after saying so in this same dialog.

/** An edit of one flag in one environment, as PATCH of the flag would take it. */
export interface FlagWrite {
  env: { key: string; name: string };
  slug: string;
  values: Record<string, unknown>;
  /** The request's title as proposed ("Switch checkout on in production"); the author may change it. */
  title: string;
}

/** Whether an environment of the project is protected (its writes go through review). */
export function useIsProtected(projectKey: string): (envKey: string) => boolean {
  const project = useProject(projectKey);
  return (envKey) => project.data?.environments.find((e) => e.key === envKey)?.protected === true;
}

/** "production is protected: saving proposes a change request" beside the Save of a protected environment. */
export function ProtectedNote({ envName }: { envName: string }) {
  return <p className="muted protected-note">{envName} is protected: saving proposes a change request for review.</p>;
}

const flagPath = (projectKey: string, write: FlagWrite) =>
  `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(write.env.key)}/flags/${encodeURIComponent(write.slug)}`;

/** The dialog a write of a protected environment opens: propose it for review, or (owners) write it without review. */
export function ProtectedWriteDialog({
  projectKey,
  write,
  onClose,
  onWritten,
}: {
  projectKey: string;
  write: FlagWrite | null;
  onClose: () => void;
  /** After an owner wrote it without review: the flag's answer. */
  onWritten?: (answer: unknown) => void;
}) {
  const owner = useSession().data?.role === 'owner';
  const [title, setTitle] = useState('');
  const [shownFor, setShownFor] = useState<FlagWrite | null>(null);
  // A new write starts with its own proposed title and no earlier outcome.
  if (write !== shownFor) {
    setShownFor(write);
    setTitle(write?.title ?? '');
  }
  const invalidates = [['flags', projectKey], ['audit'], ['change-requests', projectKey], ['compare', projectKey], ['stale-flags', projectKey]];
  const propose = useMutation({
    mutationFn: (w: FlagWrite) =>
      api<{ id: string }>('POST', `/projects/${encodeURIComponent(projectKey)}/change-requests`, {
        environment: w.env.key,
        title: title.trim() || w.title,
        flags: [{ slug: w.slug, values: w.values }],
        submit: true,
      }),
    meta: { error: false, invalidates },
  });
  const bypass = useMutation({
    mutationFn: (w: FlagWrite) => api<unknown>('PATCH', `${flagPath(projectKey, w)}?bypassProtection=true`, w.values),
    meta: { success: 'Saved without review', error: false, invalidates },
    onSuccess: (answer) => {
      onWritten?.(answer);
      close();
    },
  });
  const close = () => {
    propose.reset();
    bypass.reset();
    onClose();
  };
  if (!write) return null;
  const busy = propose.isPending || bypass.isPending;
  return (
    <Dialog title={`${write.env.name} is protected`} open onClose={close}>
      {propose.data ? (
        <>
          <p role="status">
            <Link href={`/projects/${projectKey}/changes/${propose.data.id}`}>The change request</Link> waits for review; {write.env.name} changes once it is
            approved and applied.
          </p>
          <div className="actions">
            <Button onClick={close}>Close</Button>
          </div>
        </>
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (!busy) propose.mutate(write);
          }}
        >
          <p>Changes to {write.env.name} are reviewed: this one becomes a change request that another member approves.</p>
          <Field label="Title of the change request" value={title} onChange={setTitle} required />
          {owner && <p className="muted">As an owner you may also save it without review: it is recorded in the history as a bypass of the protection.</p>}
          <ErrorMessage error={propose.error ?? bypass.error} />
          <div className="actions">
            <Button type="submit" variant="primary" busy={propose.isPending} busyText="Proposing…" disabled={busy || title.trim() === ''}>
              Propose for review
            </Button>
            {owner && (
              <Button variant="danger-text" busy={bypass.isPending} busyText="Saving…" disabled={busy} onClick={() => bypass.mutate(write)}>
                Save without review
              </Button>
            )}
            <Button onClick={close} disabled={busy}>
              Cancel
            </Button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
