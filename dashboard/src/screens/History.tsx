import { useInfiniteQuery, useMutation } from '@tanstack/react-query';
import { Link } from 'wouter';
import { useCanWrite } from '../session.ts';
import { api, type AuditEntry } from '../api.ts';
import { ErrorMessage, formatDate, Loading } from '../ui.tsx';

const show = (value: unknown): string => {
  if (value === undefined) return '';
  if (value === null) return 'none';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
};

/** What an entry changed, in words: "enabled: false → true". */
function describe(entry: AuditEntry): string {
  return Object.entries(entry.changes)
    .map(([field, change]) => {
      if (!('before' in change)) return `${field}: ${show(change.after)}`;
      if (!('after' in change)) return `${field} was ${show(change.before)}`;
      return `${field}: ${show(change.before)} → ${show(change.after)}`;
    })
    .join('; ');
}

/** A page-by-page list of audit entries for a filter of GET /admin/v1/audit (a flag's, a project's). */
export function History({
  query,
  environments,
  label,
  revertIn,
}: {
  query: string;
  environments?: Map<string, string>;
  label: string;
  /** The project whose flag changes get a Revert button (issue 24). */
  revertIn?: string;
}) {
  const pages = useInfiniteQuery({
    queryKey: ['audit', query],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      api<{ entries: AuditEntry[]; nextCursor: string | null }>(
        'GET',
        `/audit?limit=20&${query}${pageParam ? `&cursor=${encodeURIComponent(pageParam)}` : ''}`,
      ),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const entries = pages.data?.pages.flatMap((p) => p.entries) ?? [];
  return (
    <div>
      {pages.isPending && <Loading what="the history" />}
      <ErrorMessage error={pages.error} />
      {pages.data && entries.length === 0 && <p className="muted">No change recorded yet.</p>}
      {entries.length > 0 && (
        <table className="history" aria-label={label}>
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
            {entries.map((entry) => (
              <tr key={entry.id}>
                <td>{formatDate(entry.at)}</td>
                <td>{entry.actor.label}</td>
                <td>
                  {entry.action.replace('_', ' ').replace('.', ' ')} {entry.entityId}
                  {entry.environmentKey && ` in ${environments?.get(entry.environmentKey) ?? entry.environmentKey}`}
                </td>
                <td>{describe(entry)}</td>
                {revertIn && <td>{entry.action === 'flag.updated' && entry.environmentKey && <RevertButton projectKey={revertIn} entry={entry} />}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pages.hasNextPage && (
        <button type="button" onClick={() => pages.fetchNextPage()} disabled={pages.isFetchingNextPage}>
          {pages.isFetchingNextPage ? 'Loading…' : 'Show older changes'}
        </button>
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
  });
  return (
    <>
      <button type="button" disabled={!canWrite || revert.isPending} onClick={() => revert.mutate()}>
        Revert
      </button>
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
