import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, type Delivery, type SubmissionDetail } from '../api.ts';
import { Badge, Breadcrumbs, Button, ConfirmDialog, ErrorMessage, formatDate, Loading, plural, Section, Table, toast } from '../ui/index.ts';
import { useCanWrite } from '../session.ts';
import { useForm } from './Forms.tsx';
import { SpamReasons } from './Submissions.tsx';

const size = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Images the browser shows safely in an <img> (no SVG: it is a document of its own). */
const PREVIEWED = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif']);

/** How many submissions around this one the screen looks at for its newer and older neighbours. */
const NEIGHBOURHOOD = 100;

/**
 * The newer and older submission of the same kind (inbox or spam) as this one, newest first: found in the
 * newest NEIGHBOURHOOD of them; an older submission than those has no such links.
 */
function useNeighbours(formKey: string, submission: SubmissionDetail | undefined): { newer?: string; older?: string } {
  const spam = submission ? String(submission.spam) : 'false';
  const list = useQuery({
    queryKey: ['submissions', formKey, `neighbours:${spam}`],
    queryFn: () => api<{ submissions: Array<{ id: string }> }>('GET', `/forms/${encodeURIComponent(formKey)}/submissions?limit=${NEIGHBOURHOOD}&spam=${spam}`),
    enabled: submission !== undefined,
  });
  const ids = list.data?.submissions.map((s) => s.id) ?? [];
  const at = submission ? ids.indexOf(submission.id) : -1;
  if (at < 0) return {};
  return { newer: ids[at - 1], older: ids[at + 1] };
}

export function SubmissionScreen({ params }: { params: { key: string; id: string } }) {
  const canWrite = useCanWrite();
  const [, navigate] = useLocation();
  const path = `/forms/${encodeURIComponent(params.key)}/submissions/${encodeURIComponent(params.id)}`;
  const submission = useQuery({ queryKey: ['submission', params.key, params.id], queryFn: () => api<SubmissionDetail>('GET', path) });
  const [asking, setAsking] = useState(false);
  const mark = useMutation({
    mutationFn: (spam: boolean) => api<SubmissionDetail>('PATCH', path, { spam }),
    meta: {
      error: 'Not changed',
      invalidates: [['submission', params.key, params.id], ['submissions', params.key], ['form', params.key], ['form-analytics', params.key], ['audit']],
    },
    onSuccess: (answer) => toast.success(answer.spam ? 'Marked as spam' : 'Marked as not spam'),
  });
  const resend = useMutation({
    mutationFn: (delivery: Delivery) => api<Delivery>('POST', `/forms/${encodeURIComponent(params.key)}/deliveries/${encodeURIComponent(delivery.id)}/resend`),
    meta: { error: 'Not re-sent', invalidates: [['submission', params.key, params.id], ['form-analytics', params.key], ['audit']] },
    onSuccess: (d) => toast.success(`Queued the ${d.kind} to ${d.target} again`),
  });
  const remove = useMutation({
    mutationFn: () => api('DELETE', path),
    meta: {
      success: 'Submission deleted',
      error: false,
      invalidates: [['submissions', params.key], ['form', params.key], ['form-analytics', params.key], ['audit']],
    },
    onSuccess: () => navigate(`/forms/${params.key}/submissions`),
  });
  const form = useForm(params.key);
  const neighbours = useNeighbours(params.key, submission.data);
  const inbox = `/forms/${params.key}/submissions${submission.data?.spam ? '?spam=true' : ''}`;
  return (
    <>
      <Breadcrumbs
        items={[
          { label: 'Forms', href: '/forms' },
          { label: form.data?.name ?? 'Form', href: `/forms/${params.key}` },
          { label: 'Submissions', href: inbox },
          { label: 'Submission' },
        ]}
      />
      <h1>Submission</h1>
      {(neighbours.newer || neighbours.older) && (
        <nav aria-label="Other submissions" className="actions">
          {neighbours.newer && (
            <Link className="button" href={`/forms/${params.key}/submissions/${encodeURIComponent(neighbours.newer)}`}>
              ← Newer submission
            </Link>
          )}
          {neighbours.older && (
            <Link className="button" href={`/forms/${params.key}/submissions/${encodeURIComponent(neighbours.older)}`}>
              Older submission →
            </Link>
          )}
        </nav>
      )}
      {submission.isPending && <Loading what="the submission" />}
      <ErrorMessage error={submission.error} />
      {submission.data && (
        <>
          <p>
            Received {formatDate(submission.data.createdAt)} {submission.data.spam && <Badge tone="warn">Spam</Badge>}
          </p>
          {submission.data.spam && (submission.data.spamReasons ?? []).length > 0 && (
            <div className="note">
              <p>Kept as spam because:</p>
              <SpamReasons reasons={submission.data.spamReasons ?? []} />
              <p className="muted small-text">Marking it as not spam sends the deliveries that spam skipped.</p>
            </div>
          )}
          <div className="actions">
            <button type="button" onClick={() => mark.mutate(!submission.data.spam)} disabled={mark.isPending || !canWrite}>
              {mark.isPending ? 'Saving…' : submission.data.spam ? 'Mark as not spam' : 'Mark as spam'}
            </button>
            <Button variant="danger" onClick={() => setAsking(true)} disabled={!canWrite}>
              Delete submission…
            </Button>
          </div>
          <ConfirmDialog
            open={asking}
            title="Delete this submission?"
            confirmLabel="Delete submission"
            onConfirm={() => remove.mutate()}
            onCancel={() => {
              remove.reset();
              setAsking(false);
            }}
            pending={remove.isPending}
            error={remove.error}
          >
            <p>Its fields and files are deleted, and its pending deliveries stop. This cannot be undone.</p>
          </ConfirmDialog>
          <Section title="Fields">
            <dl>
              {Object.entries(submission.data.data).map(([name, value]) => (
                <div key={name} className="pair">
                  <dt>{name}</dt>
                  <dd>{Array.isArray(value) ? value.join(', ') : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)}</dd>
                </div>
              ))}
            </dl>
          </Section>
          <Section title="Files">
            {submission.data.files.length === 0 && <p className="muted">No file.</p>}
            <ul className="plain">
              {submission.data.files.map((f) => (
                <li key={f.id}>
                  {PREVIEWED.has(f.contentType) && (
                    <img className="file-preview" src={`/admin/v1${path}/files/${encodeURIComponent(f.id)}`} alt={`Preview of ${f.name}`} loading="lazy" />
                  )}
                  <a href={`/admin/v1${path}/files/${encodeURIComponent(f.id)}`} download={f.name}>
                    {f.name}
                  </a>{' '}
                  <span className="muted">
                    {f.field}, {f.contentType}, {size(f.size)}
                  </span>
                </li>
              ))}
            </ul>
          </Section>
          <Section title="Request">
            <dl>
              {(['ip', 'userAgent', 'referer', 'origin'] as const).map((k) => (
                <div key={k} className="pair">
                  <dt>{{ ip: 'IP address', userAgent: 'User agent', referer: 'Referer', origin: 'Origin' }[k]}</dt>
                  <dd>{submission.data.meta[k] ?? '-'}</dd>
                </div>
              ))}
            </dl>
          </Section>
          <Section title="Deliveries">
            {submission.data.deliveries.length === 0 && <p className="muted">No webhook or e-mail for this form.</p>}
            {submission.data.deliveries.map((d) => (
              <div key={d.id} className="delivery">
                <h3>
                  {d.kind} to {d.target}: <Badge tone={d.status === 'delivered' ? 'ok' : d.status === 'failed' ? 'danger' : 'muted'}>{d.status}</Badge>
                </h3>
                {d.status !== 'pending' && (
                  <Button
                    size="small"
                    onClick={() => resend.mutate(d)}
                    busy={resend.isPending && resend.variables?.id === d.id}
                    busyText="Queuing…"
                    disabled={!canWrite || resend.isPending}
                    aria-label={`Re-send the ${d.kind} to ${d.target}`}
                  >
                    Re-send
                  </Button>
                )}
                <p className="muted">
                  {plural(d.attempts, 'attempt')}
                  {d.deliveredAt ? `, delivered ${formatDate(d.deliveredAt)}` : ''}
                  {d.nextAttemptAt ? `, next attempt ${formatDate(d.nextAttemptAt)}` : ''}
                  {d.lastError ? `, last error: ${d.lastError}` : ''}
                </p>
                {d.history.length > 0 && (
                  <Table>
                    <thead>
                      <tr>
                        <th scope="col">Attempt</th>
                        <th scope="col">Started</th>
                        <th scope="col">Result</th>
                        <th scope="col">Duration</th>
                      </tr>
                    </thead>
                    <tbody>
                      {d.history.map((a) => (
                        <tr key={a.attempt}>
                          <td>{a.attempt}</td>
                          <td>{formatDate(a.startedAt)}</td>
                          <td>{a.ok ? `OK ${a.statusCode ?? ''}` : (a.error ?? `HTTP ${a.statusCode}`)}</td>
                          <td>{a.durationMs} ms</td>
                        </tr>
                      ))}
                    </tbody>
                  </Table>
                )}
              </div>
            ))}
          </Section>
        </>
      )}
    </>
  );
}
