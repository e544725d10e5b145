import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api.ts';
import { useCanWrite, useSession } from '../session.ts';
import { Differences } from '../targeting/Differences.tsx';
import {
  Breadcrumbs,
  Button,
  ConfirmDialog,
  DateText,
  EmptyState,
  ErrorMessage,
  Field,
  Loading,
  plural,
  problemsOf,
  ProblemsProvider,
  rules,
  Section,
  TextArea,
  toast,
} from '../ui/index.ts';
import { ReleasePlanSummary } from './Releases.tsx';
import { StatusBadge } from './ChangeRequests.tsx';
import { useProject } from './Projects.tsx';

// Issue 24: one change request: what it changes (against the configuration as it is now; once applied,
// against what it replaced), approvals,
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
  revisions: Array<{ revision: number; author: string; approvalsReset: boolean }>;
  cannotApprove: string[];
  changes: Array<{
    kind: 'flag' | 'segment' | 'release';
    key: string;
    config: Record<string, unknown>;
    conflict: boolean;
    /** What the differences compare with: the configuration now, the one it replaced when applied, or unknown (applied long ago). */
    differencesOf: 'now' | 'applied' | 'unknown';
    differences: Array<{ field: string; from: unknown; to: unknown }>;
  }>;
  comments: Array<{ id: string; author: string; body: string; at: string }>;
  scheduledAt: string | null;
  appliedAt: string | null;
  appliedLate: boolean;
  failure: string | null;
}

/** A datetime-local value an hour from now, in the browser's time zone. */
function inAnHour(): string {
  const d = new Date(Date.now() + 3_600_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

type Review = 'submit' | 'approve' | 'reject' | 'cancel';
const DONE: Record<Review, string> = {
  submit: 'Submitted for review',
  approve: 'Approved the change request',
  reject: 'Rejected the change request',
  cancel: 'Cancelled the change request',
};

const scheduleRule = (v: string) => (v === '' ? 'Required' : Number.isNaN(new Date(v).getTime()) ? 'Enter a date and time' : undefined);

export function ChangeRequestScreen({ params }: { params: { key: string; id: string } }) {
  const canWrite = useCanWrite();
  const me = useSession().data?.user?.id ?? null;
  const [confirmApply, setConfirmApply] = useState(false);
  const project = useProject(params.key);
  const path = `/projects/${encodeURIComponent(params.key)}/change-requests/${encodeURIComponent(params.id)}`;
  const requestKey = ['change-request', params.key, params.id];
  const request = useQuery({ queryKey: requestKey, queryFn: () => api<ChangeRequestView>('GET', path) });
  // What a step of the review changes: this request, the project's list, the history.
  const reviewed = [requestKey, ['change-requests', params.key], ['audit']];
  const review = useMutation({
    // An approval is of the revision shown: the server answers 409 when the request changed since.
    mutationFn: (what: Review) => api('POST', `${path}/${what}`, what === 'approve' ? { revision: request.data?.revision } : undefined),
    meta: { error: false, invalidates: reviewed },
    onSuccess: (_data, what) => toast.success(DONE[what]),
  });
  // Applying also writes the flags and segments it changes.
  const apply = useMutation({
    mutationFn: () => api('POST', `${path}/apply`),
    meta: {
      success: 'Applied the change request',
      error: false,
      invalidates: [...reviewed, ['flags', params.key], ['segments', params.key], ['compare', params.key], ['stale-flags', params.key]],
    },
    onSuccess: () => setConfirmApply(false),
  });
  const [at, setAt] = useState(inAnHour);
  const schedule = useMutation({
    mutationFn: () => api('PUT', `${path}/schedule`, { at: new Date(at).toISOString() }),
    meta: { success: 'Scheduled the change request', error: false, invalidates: reviewed },
  });
  const unschedule = useMutation({
    mutationFn: () => api('DELETE', `${path}/schedule`),
    meta: { success: 'Unscheduled the change request', error: false, invalidates: reviewed },
  });
  const [comment, setComment] = useState('');
  const addComment = useMutation({
    mutationFn: () => api('POST', `${path}/comments`, { body: comment }),
    meta: { success: 'Comment added', error: false, invalidates: [requestKey] },
    onSuccess: () => setComment(''),
  });
  if (request.isPending) return <Loading what="the change request" />;
  if (request.error) return <ErrorMessage error={request.error} />;
  const r = request.data;
  const open = ['draft', 'in_review', 'approved', 'scheduled'].includes(r.status);
  const busy = review.isPending || apply.isPending;
  const button = (what: Review, label: string, enabled: boolean, variant?: 'primary' | 'danger-text') =>
    enabled && (
      <Button variant={variant} disabled={!canWrite || busy} busy={review.isPending && review.variables === what} onClick={() => review.mutate(what)}>
        {label}
      </Button>
    );
  // What this reader may do, by the rules the server applies (change.ts): no button that would be refused.
  const approved = r.approvals.length >= r.requiredApprovals;
  const canApply = ['draft', 'in_review', 'approved'].includes(r.status) && approved;
  const canSchedule = ['draft', 'in_review', 'approved', 'scheduled'].includes(r.status) && approved;
  const reviewable = r.status === 'in_review' || r.status === 'approved';
  const ownRequest = me !== null && r.cannotApprove.includes(me);
  const approvedByMe = me !== null && r.approvals.some((a) => a.userId === me);
  // Only members approve (the admin token is nobody): a signed-in editor or owner who did not write it or approve it yet.
  const canApprove = reviewable && me !== null && !ownRequest && !approvedByMe;
  // A protected environment's change goes out at once with Apply now: one more click to say so.
  const protectedTarget = r.requiredApprovals > 0;
  return (
    <>
      <Breadcrumbs
        items={[
          { label: 'Projects', href: '/projects' },
          { label: project.data?.name ?? params.key, href: `/projects/${params.key}` },
          { label: 'Change requests', href: `/projects/${params.key}/changes` },
          { label: r.title },
        ]}
      />
      <h1>{r.title}</h1>
      <p>
        <StatusBadge status={r.status} /> in {r.environment.name}, proposed by {r.author}
        {r.scheduledAt && r.status === 'scheduled' && (
          <>
            ; applies <DateText iso={r.scheduledAt} />
          </>
        )}
        {r.appliedAt && (
          <>
            ; applied <DateText iso={r.appliedAt} />
            {r.appliedLate && ' (late: no instance was running at its time)'}
          </>
        )}
      </p>
      {r.description && <p>{r.description}</p>}
      {r.failure && (
        <div role="alert" className="error">
          <p>Not applied: {r.failure}</p>
        </div>
      )}
      <Section title="Changes">
        {r.changes.length === 0 && <EmptyState title="No change">This request changes nothing.</EmptyState>}
        {r.changes.map((c) => (
          <div key={`${c.kind}:${c.key}`}>
            <h3>
              {c.kind === 'flag' ? 'Flag' : c.kind === 'release' ? 'Release of flag' : 'Segment'} {c.key}
              {c.conflict && ' (changed since: applying is refused)'}
            </h3>
            {c.kind === 'release' ? (
              <ReleasePlanSummary plan={c.config} />
            ) : c.differencesOf === 'unknown' ? (
              <p className="muted">Applied before Flagpost kept what a request replaced: the history has each change it made.</p>
            ) : c.differences.length === 0 ? (
              <p className="muted">{c.differencesOf === 'applied' ? 'Applied without a difference.' : 'Same as now.'}</p>
            ) : (
              <Differences differences={c.differences} label={`Changes of ${c.kind} ${c.key}`} />
            )}
          </div>
        ))}
      </Section>
      <Section title={`Approvals (${r.approvals.length} of ${r.requiredApprovals})`}>
        {open && (
          <p className="muted">
            Approving approves revision {r.revision}, as shown here. Who wrote a revision since the approvals were last reset (
            {[...new Set(r.revisions.map((v) => v.author))].join(', ') || r.author}) cannot approve it.
          </p>
        )}
        {r.approvals.length === 0 ? (
          <p className="muted">No approval yet.</p>
        ) : (
          <ul className="plain">
            {r.approvals.map((a) => (
              <li key={a.userId}>
                {a.label}, <DateText iso={a.at} />
              </li>
            ))}
          </ul>
        )}
        <div className="actions">
          {button('submit', 'Submit for review', r.status === 'draft')}
          {button('approve', 'Approve', canApprove, 'primary')}
          {canApply && (
            <Button
              disabled={!canWrite || busy}
              busy={apply.isPending}
              busyText="Applying…"
              onClick={() => (protectedTarget ? setConfirmApply(true) : apply.mutate())}
            >
              Apply now
            </Button>
          )}
          {button('reject', 'Reject', ['in_review', 'approved', 'scheduled'].includes(r.status), 'danger-text')}
          {button('cancel', 'Cancel', open, 'danger-text')}
        </div>
        {reviewable && ownRequest && <p className="muted">You wrote this request or a revision of it: another member approves it.</p>}
        {reviewable && approvedByMe && !approved && <p className="muted">You approved this revision; it waits for more approvals.</p>}
        {open && !approved && r.status !== 'draft' && (
          <p className="muted">
            Applying and scheduling are possible once it has {r.requiredApprovals === 1 ? 'its approval' : `${r.requiredApprovals} approvals`}.
          </p>
        )}
        <ErrorMessage error={review.error ?? (confirmApply ? undefined : apply.error)} />
        <ConfirmDialog
          open={confirmApply}
          title={`Apply to ${r.environment.name} now?`}
          confirmLabel="Apply now"
          pendingLabel="Applying…"
          pending={apply.isPending}
          error={apply.error}
          onConfirm={() => apply.mutate()}
          onCancel={() => {
            setConfirmApply(false);
            apply.reset();
          }}
        >
          <p>
            The environment {r.environment.name} is protected: {plural(r.changes.length, 'change')} of this request reach everyone who reads its flags at once.
          </p>
        </ConfirmDialog>
      </Section>
      {canSchedule && (
        <Section title="Schedule">
          <form
            className="inline"
            aria-label="Schedule"
            onSubmit={(event: FormEvent) => {
              event.preventDefault();
              if (!scheduleRule(at)) schedule.mutate();
            }}
          >
            <Field label="Apply at" type="datetime-local" value={at} onChange={setAt} validate={scheduleRule} required hint="Your local time" />
            <Button type="submit" disabled={!canWrite} busy={schedule.isPending} busyText="Scheduling…">
              Schedule
            </Button>
            {r.status === 'scheduled' && (
              <Button disabled={!canWrite} busy={unschedule.isPending} busyText="Unscheduling…" onClick={() => unschedule.mutate()}>
                Unschedule
              </Button>
            )}
          </form>
          <ErrorMessage error={schedule.error ?? unschedule.error} />
        </Section>
      )}
      <Section title="Comments">
        {r.comments.length === 0 && <p className="muted">No comment yet.</p>}
        {r.comments.length > 0 && (
          <ul className="plain comments">
            {r.comments.map((c) => (
              <li key={c.id}>
                <strong>{c.author}</strong> <DateText iso={c.at} />
                <p>{c.body}</p>
              </li>
            ))}
          </ul>
        )}
        <ProblemsProvider value={problemsOf(addComment.error)}>
          <form
            aria-label="Comment"
            onSubmit={(event: FormEvent) => {
              event.preventDefault();
              if (!rules.required(comment)) addComment.mutate();
            }}
          >
            <TextArea label="Comment" path="body" value={comment} onChange={setComment} />
            <ErrorMessage error={addComment.error} inline={['body']} />
            <Button type="submit" disabled={!canWrite || comment.trim() === ''} busy={addComment.isPending} busyText="Adding…">
              Comment
            </Button>
          </form>
        </ProblemsProvider>
      </Section>
    </>
  );
}
