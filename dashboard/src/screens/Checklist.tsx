import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { api, type FlagEntry, type Project } from '../api.ts';
import { useSession } from '../session.ts';
import { Button, Section } from '../ui/index.ts';

// The first-run checklist (issue 22): the owner account, a project, a flag, reading it with the SDK.
// Each step is checked against the server: the last one ticks itself once usage shows a read of a flag of
// the first project (its lastEvaluatedAt, issue 31 item 17), or when the person ticks it (kept in this
// browser: a read through flagd sync is not counted). The list goes once every step is done, or when it is
// dismissed.

const READ_DONE = 'flagpost-first-read-done';
const DISMISSED = 'flagpost-checklist-dismissed';
const stored = (key: string) => {
  try {
    return localStorage.getItem(key) === '1';
  } catch {
    return false;
  }
};
const store = (key: string) => {
  try {
    localStorage.setItem(key, '1');
  } catch {
    // private mode: for this page only
  }
};

/** Whether an app has read one of these flags: usage keeps when each was last evaluated, per environment. */
const wasRead = (flags: FlagEntry[] | undefined) => (flags ?? []).some((f) => f.environments.some((e) => e.lastEvaluatedAt !== null));

export function FirstRunChecklist({ projects }: { projects: Project[] }) {
  const session = useSession();
  const owner = session.data?.role === 'owner';
  const users = useQuery({ queryKey: ['users'], queryFn: () => api<{ users: unknown[] }>('GET', '/users'), enabled: owner });
  const first = projects[0];
  const [ticked, setTicked] = useState(() => stored(READ_DONE));
  const flags = useQuery({
    queryKey: ['flags', first?.key],
    queryFn: () => api<{ flags: FlagEntry[] }>('GET', `/projects/${encodeURIComponent(first!.key)}/flags`),
    enabled: first !== undefined,
    // Usage is written every FLAGPOST_USAGE_FLUSH_MS (a minute by default): look again while the read is awaited.
    refetchInterval: (query) => (ticked || wasRead(query.state.data?.flags) ? false : 30_000),
  });
  const read = ticked || wasRead(flags.data?.flags);
  const [dismissed, setDismissed] = useState(() => stored(DISMISSED));
  if (dismissed || session.isPending || (owner && users.isPending)) return null;
  const steps = [
    {
      done: !owner || (users.data?.users.length ?? 0) > 0,
      text: 'Create the first owner account',
      href: '/members',
      action: null,
    },
    { done: projects.length > 0, text: 'Create a project', href: undefined, action: <span className="muted">(below)</span> },
    {
      done: (flags.data?.flags.length ?? 0) > 0,
      text: 'Create a flag',
      href: first ? `/projects/${first.key}` : undefined,
      action: null,
    },
    {
      done: read,
      text: 'Read it from your app with the SDK snippet',
      href: first ? `/projects/${first.key}/environments` : undefined,
      action: (
        <>
          <Button
            size="small"
            onClick={() => {
              store(READ_DONE);
              setTicked(true);
            }}
          >
            Done
          </Button>
        </>
      ),
    },
  ];
  if (steps.every((s) => s.done)) return null;
  const left = steps.filter((s) => !s.done).length;
  return (
    <Section
      title="Getting started"
      actions={
        <Button
          size="small"
          variant="ghost"
          onClick={() => {
            store(DISMISSED);
            setDismissed(true);
          }}
        >
          Hide
        </Button>
      }
    >
      <div className="checklist">
        <p className="muted">
          {left} of {steps.length} steps left.
        </p>
        <ol>
          {steps.map((s) => (
            <li key={s.text} className={s.done ? 'done' : undefined}>
              <span className="sr-only">{s.done ? 'Done: ' : 'To do: '}</span>
              {!s.done && s.href ? <Link href={s.href}>{s.text}</Link> : s.text} {!s.done && s.action}
            </li>
          ))}
        </ol>
      </div>
    </Section>
  );
}
