import { useInfiniteQuery, useMutation, useQueries, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link } from 'wouter';
import { useCanWrite } from '../session.ts';
import { api, type AuditEntry } from '../api.ts';
import { ChangeLine } from '../targeting/Differences.tsx';
import { Button, DateText, EmptyState, ErrorMessage, Loading, Select, Table, toast } from '../ui/index.ts';

// The history (audit log) as people read it: names instead of keys, rich text as its text, the changes
// as before → after, and one row per user action (a save that wrote one entry per environment is one
// row "in production, staging"). Filters: who, what, which environment, and the entity kind.

/** One change per line: "Enabled: off → on", targeting in words, ids as the names they stand for. */
function Changes({ entry, names }: { entry: AuditEntry; names: Names }) {
  // A creation lists what was set, not every empty default.
  const empty = (v: unknown) =>
    v === null || v === '' || v === false || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && Object.keys(v).length === 0);
  // A value the write left as it was names what the entry is about (a member's e-mail): the What column says it.
  const same = (c: { before?: unknown; after?: unknown }) => 'before' in c && 'after' in c && JSON.stringify(c.before) === JSON.stringify(c.after);
  const lines = Object.entries(entry.changes).filter(([, c]) => ('before' in c || !empty(c.after)) && !same(c));
  if (lines.length === 0) return null;
  return (
    <ul className="plain diff">
      {lines.map(([field, change]) => (
        <ChangeLine key={field} field={field} change={named(field, change, names)} />
      ))}
    </ul>
  );
}

/**
 * A change whose values are ids or keys (the change request it came from, the environment promoted from)
 * with the names instead; the invitation a member joined by is that member's own, so it says "accepted".
 */
function named(field: string, change: { before?: unknown; after?: unknown }, names: Names): { before?: unknown; after?: unknown } {
  if (field === 'invitation') return { after: 'accepted' };
  // A flag's change that a release's step made records the release's id: the release is the flag's own.
  if (field === 'release') return { after: 'its release' };
  const lookup =
    field === 'changeRequest'
      ? names.changeRequests
      : field === 'promotedFrom' || field === 'environments' || field === 'enabledIn'
        ? names.environments
        : field === 'form'
          ? names.forms
          : undefined;
  if (!lookup) return change;
  // A deleted flag lists the environments it had by their keys.
  const name = (v: unknown): unknown => (typeof v === 'string' ? (lookup.get(v) ?? v) : Array.isArray(v) ? v.map(name) : v);
  return Object.fromEntries(Object.entries(change).map(([k, v]) => [k, name(v)]));
}

const ACTION_WORDS: Record<string, string> = {
  created: 'created',
  updated: 'changed',
  deleted: 'deleted',
  revoked: 'revoked',
  renamed: 'renamed',
  archived: 'archived',
  unarchived: 'restored',
  role_changed: 'role changed',
  password_changed: 'password changed',
  webhook_secret_rotated: 'webhook secret rotated',
  branch_deleted: 'branch deleted',
  succeeded: 'succeeded',
  failed: 'failed',
  exported: 'exported',
  erased: 'erased',
  joined: 'joined',
  removed: 'removed',
};

const NOUNS: Record<string, string> = { api_key: 'API key', sign_in: 'Sign-in' };

/** A text value the entry recorded for `field` (after the write, else before): how entries about people and tokens name them. */
function recorded(entry: AuditEntry, field: string): string | undefined {
  const change = entry.changes[field];
  const value = change && ('after' in change ? change.after : change.before);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** What an entry is about, by its name where one is known (issue 31 item 12); its id where none is. */
function subjectOf(entry: AuditEntry, names: Names): string {
  const id = entry.entityId;
  const quoted = (name: string | undefined) => (name === undefined ? id : `“${name}”`);
  switch (entry.entity) {
    case 'environment':
      return names.environments.get(id) ?? id;
    case 'project':
      return names.projects?.get(id) ?? id;
    case 'personal_data':
      return 'of one person';
    case 'change_request':
      return quoted(names.changeRequests?.get(id));
    case 'form':
      return names.forms?.get(id) ?? id;
    case 'member':
      return recorded(entry, 'email') ?? names.members?.get(id) ?? id;
    case 'invitation':
      return recorded(entry, 'email') ?? id;
    case 'access_token':
    case 'api_key':
    case 'metric':
    case 'experiment':
      return quoted(recorded(entry, 'name'));
    case 'webhook': {
      // By its host: a chat service's URL is a key, and viewers read it redacted (then: "Webhook created").
      const url = recorded(entry, 'webhookUrl');
      const host = url && URL.canParse(url) ? new URL(url).host : undefined;
      return host ? `to ${host}` : '';
    }
    case 'release': {
      const flag = recorded(entry, 'flag');
      return flag ? `of ${flag}` : id;
    }
    case 'sign_in':
      // A success is recorded under the member's id and acts as them; a failure under the address tried.
      return entry.changes.method?.after === 'admin_token'
        ? 'with the admin token'
        : `of ${entry.action === 'sign_in.succeeded' && entry.actor.type === 'user' ? entry.actor.label : (names.members?.get(id) ?? id)}`;
    default:
      return id;
  }
}

/** "Flag checkout changed", "API key “storefront” revoked", "Member ada@example.com role changed", "Webhook to hooks.example.com created". */
export function whatText(entry: AuditEntry, names: Names): string {
  const [kind = entry.entity, verb = ''] = entry.action.split('.');
  const noun = NOUNS[kind] ?? kind.replace(/_/g, ' ');
  const Noun = noun.charAt(0).toUpperCase() + noun.slice(1);
  return [Noun, subjectOf(entry, names), ACTION_WORDS[verb] ?? verb.replace(/_/g, ' ')].filter((part) => part !== '').join(' ');
}

export interface Names {
  environments: Map<string, string>;
  projects?: Map<string, string>;
  /**
   * Change request id → title, form key → name, member id → e-mail address (issue 31 item 12): History
   * finds these itself. Members are for entries recorded before entries named them.
   */
  changeRequests?: Map<string, string>;
  forms?: Map<string, string>;
  members?: Map<string, string>;
}

/**
 * The names of what the loaded entries name by id: the change requests of their projects and the forms.
 * A list that cannot be read (a member without access) leaves the ids as they are.
 */
function useEntryNames(entries: AuditEntry[], given: Names): Names {
  const projectKeys = [...new Set(entries.filter((e) => e.entity === 'change_request' || 'changeRequest' in e.changes).map((e) => e.projectKey))].filter(
    (k): k is string => typeof k === 'string' && k !== '',
  );
  const requests = useQueries({
    queries: projectKeys.map((key) => ({
      queryKey: ['change-requests', key, 'all'],
      queryFn: () =>
        api<{ changeRequests: Array<{ id: string; title: string }> }>('GET', `/projects/${encodeURIComponent(key)}/change-requests?status=all&limit=500`),
      retry: false,
    })),
  });
  const hasForms = entries.some((e) => e.entity === 'form' || e.entity === 'submission');
  const forms = useQuery({
    queryKey: ['forms'],
    queryFn: () => api<{ forms: Array<{ key: string; name: string }> }>('GET', '/forms'),
    enabled: hasForms,
    retry: false,
  });
  // Only owners read entries about members, and only owners list the members.
  const hasMembers = entries.some((e) => e.entity === 'member' || e.entity === 'sign_in');
  const members = useQuery({
    queryKey: ['users'],
    queryFn: () => api<{ users: Array<{ id: string; email: string }> }>('GET', '/users'),
    enabled: hasMembers,
    retry: false,
  });
  const changeRequests = new Map(requests.flatMap((r) => r.data?.changeRequests ?? []).map((r) => [r.id, r.title] as const));
  return {
    ...given,
    changeRequests,
    forms: new Map((forms.data?.forms ?? []).map((f) => [f.key, f.name] as const)),
    members: new Map((members.data?.users ?? []).map((u) => [u.id, u.email] as const)),
  };
}

/** Consecutive entries of one action (same who, what, changes, within 5 s, other environments) as one row. */
interface Row {
  entry: AuditEntry;
  environments: string[];
}
export function groupEntries(entries: AuditEntry[]): Row[] {
  const rows: Row[] = [];
  for (const entry of entries) {
    const last = rows[rows.length - 1];
    if (
      last &&
      entry.environmentKey &&
      last.entry.environmentKey &&
      last.entry.actor.label === entry.actor.label &&
      last.entry.action === entry.action &&
      last.entry.entityId === entry.entityId &&
      Math.abs(Date.parse(last.entry.at) - Date.parse(entry.at)) < 5_000 &&
      JSON.stringify(last.entry.changes) === JSON.stringify(entry.changes) &&
      !last.environments.includes(entry.environmentKey)
    ) {
      last.environments.push(entry.environmentKey);
      continue;
    }
    rows.push({ entry, environments: entry.environmentKey ? [entry.environmentKey] : [] });
  }
  return rows;
}

/** A page-by-page list of audit entries for a filter of GET /admin/v1/audit (a flag's, a project's, all). */
export function History({
  query,
  names,
  label,
  filters = true,
  revertIn,
}: {
  query: string;
  names: Names;
  label: string;
  filters?: boolean;
  /** The project whose flag changes get a Revert button (issue 24). */
  revertIn?: string;
}) {
  const [who, setWho] = useState('');
  const [what, setWhat] = useState('');
  const [env, setEnv] = useState('');
  const pages = useInfiniteQuery({
    queryKey: ['audit', query],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      api<{ entries: AuditEntry[]; nextCursor: string | null }>(
        'GET',
        `/audit?limit=50${query ? `&${query}` : ''}${pageParam ? `&cursor=${encodeURIComponent(pageParam)}` : ''}`,
      ),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const entries = useMemo(() => pages.data?.pages.flatMap((p) => p.entries) ?? [], [pages.data]);
  const named = useEntryNames(entries, names);
  const people = [...new Set(entries.map((e) => e.actor.label))].sort();
  const actions = [...new Set(entries.map((e) => e.action))].sort();
  const shown = entries.filter((e) => (!who || e.actor.label === who) && (!what || e.action === what) && (!env || e.environmentKey === env));
  const rows = groupEntries(shown);
  return (
    <div>
      {filters && entries.length > 0 && (
        <div className="filters" role="group" aria-label={`Filter ${label}`}>
          <Select label="Who" value={who} onChange={setWho}>
            <option value="">Anyone</option>
            {people.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </Select>
          <Select label="What" value={what} onChange={setWhat}>
            <option value="">Any change</option>
            {actions.map((a) => (
              <option key={a} value={a}>
                {a.replace(/[._]/g, ' ')}
              </option>
            ))}
          </Select>
          {names.environments.size > 0 && (
            <Select label="Environment" value={env} onChange={setEnv}>
              <option value="">Any environment</option>
              {[...names.environments].map(([key, name]) => (
                <option key={key} value={key}>
                  {name}
                </option>
              ))}
            </Select>
          )}
        </div>
      )}
      {pages.isPending && <Loading what="the history" />}
      <ErrorMessage error={pages.error} />
      {pages.data && entries.length === 0 && (
        <EmptyState title="No change recorded yet">Every change made here or through the API shows up in this list.</EmptyState>
      )}
      {entries.length > 0 && rows.length === 0 && <p className="muted">No change matches these filters in the entries loaded.</p>}
      {rows.length > 0 && (
        <Table className="history" label={label}>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Changes</th>
              {revertIn && (
                <th scope="col">
                  <span className="sr-only">Revert</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map(({ entry, environments }) => (
              <tr key={entry.id}>
                <td>
                  <DateText iso={entry.at} />
                </td>
                <td>{entry.actor.label}</td>
                <td>
                  {whatText(entry, named)}
                  {environments.length > 0 && ` in ${environments.map((k) => names.environments.get(k) ?? k).join(', ')}`}
                </td>
                <td>
                  <Changes entry={entry} names={named} />
                </td>
                {revertIn && <td>{entry.action === 'flag.updated' && entry.environmentKey && <RevertButton projectKey={revertIn} entry={entry} />}</td>}
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {pages.hasNextPage && (
        <Button onClick={() => pages.fetchNextPage()} busy={pages.isFetchingNextPage} busyText="Loading…">
          Show older changes
        </Button>
      )}
    </div>
  );
}

/** Undoes one change of a flag as a new change, or proposes it as a change request where the environment is protected. */
function RevertButton({ projectKey, entry }: { projectKey: string; entry: AuditEntry }) {
  const canWrite = useCanWrite();
  const revert = useMutation({
    mutationFn: () =>
      api<{ applied: string[]; changeRequest: { id: string } | null }>(
        'POST',
        `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(entry.environmentKey ?? '')}/flags/${encodeURIComponent(entry.entityId)}/revert`,
        { auditId: entry.id },
      ),
    // A revert writes the flag in that environment, or opens a change request where it is protected.
    meta: {
      error: false,
      invalidates: [['flags', projectKey], ['audit'], ['change-requests', projectKey], ['compare', projectKey], ['stale-flags', projectKey]],
    },
    onSuccess: (answer) =>
      answer.changeRequest ? toast.info('The environment is protected: a change request awaits review') : toast.success('Reverted the change'),
  });
  return (
    <>
      <Button size="small" disabled={!canWrite} busy={revert.isPending} busyText="Reverting…" onClick={() => revert.mutate()}>
        Revert
      </Button>
      <ErrorMessage error={revert.error} />
      {revert.data?.changeRequest && (
        <span role="status">
          {' '}
          <Link href={`/projects/${projectKey}/changes/${revert.data.changeRequest.id}`}>Change request</Link> opened
        </span>
      )}
    </>
  );
}
