import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'wouter';
import { api } from '../api.ts';
import { useCanWrite } from '../session.ts';
import { ErrorMessage, Field, formatDate, Loading, Section, TextArea } from '../ui.tsx';
import { statusText } from './ChangeRequests.tsx';

// Issue 24: one change request: what it changes (against the configuration as it is now), approvals,
// comments, and what may be done with it (submit, approve, reject, cancel, apply, schedule).

interface ChangeRequestView {
  id: string;
  environment: { key: string; name: string };
  title: string;
  description: string;
  status: string;
  author: string;
  revision: number;
  requiredApprovals: number;
  approvals: Array<{ userId: string; label: string; at: string }>;
  changes: Array<{ kind: 'flag' | 'segment'; key: string; conflict: boolean; differences: Array<{ field: string; from: unknown; to: unknown }> }>;
  comments: Array<{ id: string; author: string; body: string; at: string }>;
  scheduledAt: string | null;
  appliedAt: string | null;
  appliedLate: boolean;
  failure: string | null;
}

const show = (value: unknown) => (value === null || value === undefined ? 'none' : typeof value === 'string' ? value : JSON.stringify(value));

/** A datetime-local value an hour from now, in the browser's time zone. */
function inAnHour(): string {
  const d = new Date(Date.now() + 3_600_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function ChangeRequestScreen({ params }: { params: { key: string; id: string } }) {
  const canWrite = useCanWrite();
  const path = `/projects/${encodeURIComponent(params.key)}/change-requests/${encodeURIComponent(params.id)}`;
  const request = useQuery({ queryKey: ['change-request', params.key, params.id], queryFn: () => api<ChangeRequestView>('GET', path) });
  const act = useMutation({ mutationFn: (what: string) => api('POST', `${path}/${what}`) });
  const [at, setAt] = useState(inAnHour);
  const schedule = useMutation({ mutationFn: () => api('PUT', `${path}/schedule`, { at: new Date(at).toISOString() }) });
  const unschedule = useMutation({ mutationFn: () => api('DELETE', `${path}/schedule`) });
  const [comment, setComment] = useState('');
  const addComment = useMutation({ mutationFn: () => api('POST', `${path}/comments`, { body: comment }), onSuccess: () => setComment('') });
  if (request.isPending) return <Loading what="the change request" />;
  if (request.error) return <ErrorMessage error={request.error} />;
  const r = request.data;
  const open = ['draft', 'in_review', 'approved', 'scheduled'].includes(r.status);
  const button = (what: string, label: string, enabled: boolean, primary = false) =>
    enabled && (
      <button type="button" className={primary ? 'primary' : undefined} disabled={!canWrite || act.isPending} onClick={() => act.mutate(what)}>
        {label}
      </button>
    );
  return (
    <>
      <p className="crumbs">
        <Link href={`/projects/${params.key}/changes`}>Change requests</Link> /
      </p>
      <h1>{r.title}</h1>
      <p>
        <strong>{statusText(r.status)}</strong> in {r.environment.name}, proposed by {r.author}
        {r.scheduledAt && r.status === 'scheduled' && <>; applies at {formatDate(r.scheduledAt)}</>}
        {r.appliedAt && (
          <>
            ; applied {formatDate(r.appliedAt)}
            {r.appliedLate && ' (late: no instance was running at its time)'}
          </>
        )}
      </p>
      {r.description && <p>{r.description}</p>}
      {r.failure && (
        <p role="alert" className="error">
          Not applied: {r.failure}
        </p>
      )}
      <Section title="Changes">
        {r.changes.map((c) => (
          <div key={`${c.kind}:${c.key}`}>
            <h3>
              {c.kind === 'flag' ? 'Flag' : 'Segment'} {c.key}
              {c.conflict && ' (changed since: applying is refused)'}
            </h3>
            {c.differences.length === 0 ? (
              <p className="muted">Same as now.</p>
            ) : (
              <table aria-label={`Changes of ${c.kind} ${c.key}`}>
                <thead>
                  <tr>
                    <th scope="col">Field</th>
                    <th scope="col">Now</th>
                    <th scope="col">After</th>
                  </tr>
                </thead>
                <tbody>
                  {c.differences.map((d) => (
                    <tr key={d.field}>
                      <th scope="row">{d.field}</th>
                      <td>
                        <code>{show(d.from)}</code>
                      </td>
                      <td>
                        <code>{show(d.to)}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </div>
        ))}
      </Section>
      <Section title={`Approvals (${r.approvals.length} of ${r.requiredApprovals})`}>
        {r.approvals.length === 0 ? (
          <p className="muted">No approval yet.</p>
        ) : (
          <ul>
            {r.approvals.map((a) => (
              <li key={a.userId}>
                {a.label}, {formatDate(a.at)}
              </li>
            ))}
          </ul>
        )}
        <div className="actions">
          {button('submit', 'Submit for review', r.status === 'draft')}
          {button('approve', 'Approve', r.status === 'in_review' || r.status === 'approved', true)}
          {button('apply', 'Apply now', r.status === 'approved' || (r.requiredApprovals === 0 && (r.status === 'draft' || r.status === 'in_review')))}
          {button('reject', 'Reject', ['in_review', 'approved', 'scheduled'].includes(r.status))}
          {button('cancel', 'Cancel', open)}
        </div>
        <ErrorMessage error={act.error} />
      </Section>
      {open && (
        <Section title="Schedule">
          <form
            className="inline"
            aria-label="Schedule"
            onSubmit={(event: FormEvent) => {
              event.preventDefault();
              schedule.mutate();
            }}
          >
            <Field label="Apply at" type="datetime-local" value={at} onChange={setAt} required />
            <button type="submit" disabled={!canWrite || schedule.isPending}>
              {schedule.isPending ? 'Scheduling…' : 'Schedule'}
            </button>
            {r.status === 'scheduled' && (
              <button type="button" disabled={!canWrite || unschedule.isPending} onClick={() => unschedule.mutate()}>
                Unschedule
              </button>
            )}
          </form>
          <ErrorMessage error={schedule.error ?? unschedule.error} />
        </Section>
      )}
      <Section title="Comments">
        {r.comments.length === 0 && <p className="muted">No comment yet.</p>}
        <ul>
          {r.comments.map((c) => (
            <li key={c.id}>
              <strong>{c.author}</strong> ({formatDate(c.at)}): {c.body}
            </li>
          ))}
        </ul>
        <form
          aria-label="Comment"
          onSubmit={(event: FormEvent) => {
            event.preventDefault();
            addComment.mutate();
          }}
        >
          <TextArea label="Comment" value={comment} onChange={setComment} />
          <button type="submit" disabled={!canWrite || addComment.isPending || comment.trim() === ''}>
            Comment
          </button>
          <ErrorMessage error={addComment.error} />
        </form>
      </Section>
    </>
  );
}
