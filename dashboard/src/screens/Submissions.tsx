import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useDeferredValue, useEffect, useState } from 'react';
import { Link, useSearch } from 'wouter';
import { api, type SpamReason, type Submission, type SubmissionDetail } from '../api.ts';
import { Badge, Button, EmptyState, ErrorMessage, Field, formatDate, KeyHint, Loading, NavTabs, Select, Table } from '../ui/index.ts';
import { useCanWrite } from '../session.ts';
import { FormHeader, useForm } from './Forms.tsx';

const PAGE = 25;

/** A short line of a submission's fields for the inbox. */
export function summaryOf(data: Record<string, unknown>): string {
  return Object.entries(data)
    .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : String(value)}`)
    .join(' · ')
    .slice(0, 160);
}

/** Why the spam filter caught a submission, one line per check. */
export function SpamReasons({ reasons }: { reasons: SpamReason[] }) {
  if (reasons.length === 0) return null;
  return (
    <ul className="spam-reasons small-text">
      {reasons.map((r, i) => (
        <li key={`${i}:${r.check}`}>
          <strong>{CHECKS[r.check] ?? r.check}</strong>: {r.detail}
        </li>
      ))}
    </ul>
  );
}

/** The spam checks by the names the list's `spamCheck` filter takes. */
const CHECKS: Record<string, string> = {
  honeypot: 'Honeypot',
  duplicate: 'Duplicate',
  minFillTime: 'Filled too fast',
  disposableEmail: 'Disposable e-mail',
  rule: 'Rule',
  proofOfWork: 'Proof of work',
  manual: 'Marked by hand',
};

export function SubmissionsScreen({ params }: { params: { key: string } }) {
  const form = useForm(params.key);
  const canWrite = useCanWrite();
  // The tab: the inbox without spam (where the screen opens, issue 31 item 15), spam only, or everything;
  // the exports ask for the same.
  const raw = new URLSearchParams(useSearch()).get('spam');
  const spam: 'all' | 'true' | 'false' = raw === 'true' || raw === 'all' ? raw : 'false';
  const [search, setSearch] = useState('');
  const [order, setOrder] = useState<'desc' | 'asc'>('desc');
  const [fieldName, setFieldName] = useState('');
  const [fieldValue, setFieldValue] = useState('');
  const [spamCheck, setSpamCheck] = useState('');
  const [files, setFiles] = useState('');
  // The server searches every submission (full text); typing waits for a pause before it asks.
  const q = useDeferredValue(useDebounced(search.trim(), 300));
  const field = useDebounced(fieldName.trim() !== '' && fieldValue.trim() !== '' ? `${fieldName.trim()}=${fieldValue.trim()}` : '', 300);
  const query = new URLSearchParams({ limit: String(PAGE), spam, order });
  if (q) query.set('q', q);
  if (field) {
    const at = field.indexOf('=');
    query.set(`field.${field.slice(0, at)}`, field.slice(at + 1));
  }
  if (spamCheck && spam !== 'false') query.set('spamCheck', spamCheck);
  const filters = query.toString();
  // Cursors of the pages before this one, so that "Previous page" can go back.
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const cursor = cursors[cursors.length - 1];
  useEffect(() => setCursors([undefined]), [filters]);
  const page = useQuery({
    queryKey: ['submissions', params.key, filters, cursor],
    queryFn: () =>
      api<{ submissions: Submission[]; nextCursor: string | null }>(
        'GET',
        `/forms/${encodeURIComponent(params.key)}/submissions?${filters}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    placeholderData: keepPreviousData,
  });
  const notSpam = useMutation({
    mutationFn: (id: string) =>
      api<SubmissionDetail>('PATCH', `/forms/${encodeURIComponent(params.key)}/submissions/${encodeURIComponent(id)}`, { spam: false }),
    meta: {
      success: 'Marked as not spam; its deliveries go out now',
      error: 'Not changed',
      invalidates: [['submissions', params.key], ['submission', params.key], ['form', params.key], ['form-analytics', params.key], ['forms'], ['audit']],
    },
  });
  if (form.isPending) return <Loading what="the form" />;
  if (form.error) return <ErrorMessage error={form.error} />;
  const base = `/forms/${params.key}/submissions`;
  const filtered = q !== '' || field !== '' || (spamCheck !== '' && spam !== 'false');
  const shown = (page.data?.submissions ?? []).filter((s) => files === '' || (files === 'with') === s.files.length > 0);
  return (
    <>
      <FormHeader form={form.data} current="submissions" />
      <div className="toolbar">
        <NavTabs
          label="Submission filter"
          current={spam}
          items={[
            { key: 'false', href: base, title: 'Inbox' },
            { key: 'true', href: `${base}?spam=true`, title: 'Spam' },
            { key: 'all', href: `${base}?spam=all`, title: 'All, spam included' },
          ]}
        />
        <div className="actions">
          <a href={`/admin/v1/forms/${encodeURIComponent(params.key)}/submissions.csv?spam=${spam}`} download className="button">
            Export CSV
          </a>
          <a href={`/admin/v1/forms/${encodeURIComponent(params.key)}/submissions.json?spam=${spam}`} download className="button">
            Export JSON
          </a>
        </div>
      </div>
      <p className="muted small-text">
        The exports hold what this tab lists: {spam === 'all' ? 'every submission, spam included' : spam === 'true' ? 'spam only' : 'everything but spam'}.
      </p>
      <div className="filters">
        <Field
          label="Search"
          type="search"
          value={search}
          onChange={setSearch}
          hint={
            <>
              Every submission&apos;s fields, on the server<KeyHint> · press / to search</KeyHint>
            </>
          }
        />
        <Field label="Field" value={fieldName} onChange={setFieldName} placeholder="topic" hint="Only submissions whose field…" />
        <Field label="Equals" value={fieldValue} onChange={setFieldValue} placeholder="sales" hint="…holds exactly this value" />
        <Select label="Order" value={order} onChange={(v) => setOrder(v === 'asc' ? 'asc' : 'desc')}>
          <option value="desc">Newest first</option>
          <option value="asc">Oldest first</option>
        </Select>
        {spam !== 'false' && (
          <Select label="Caught by" value={spamCheck} onChange={setSpamCheck}>
            <option value="">Any check</option>
            {Object.entries(CHECKS).map(([check, name]) => (
              <option key={check} value={check}>
                {name}
              </option>
            ))}
          </Select>
        )}
        <Select label="Files" value={files} onChange={setFiles}>
          <option value="">With or without</option>
          <option value="with">With files (this page)</option>
          <option value="without">Without files (this page)</option>
        </Select>
      </div>
      {page.isPending && <Loading what="submissions" />}
      <ErrorMessage error={page.error ?? notSpam.error} />
      {page.data && page.data.submissions.length === 0 && !filtered && (
        <EmptyState title={spam === 'true' ? 'No spam' : 'No submission yet'}>
          {spam === 'true'
            ? 'Submissions caught by the honeypot, the CAPTCHA, the spam checks or marked by hand show here, with the reasons.'
            : 'Point an HTML form at the endpoint on the Settings tab.'}
        </EmptyState>
      )}
      {page.data && page.data.submissions.length === 0 && filtered && <p className="muted">No submission matches.</p>}
      {shown.length === 0 && page.data && page.data.submissions.length > 0 && <p className="muted">No submission on this page matches.</p>}
      {shown.length > 0 && (
        <Table label="Submissions">
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Fields</th>
              <th scope="col">Files</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((s) => (
              <tr key={s.id}>
                <td>
                  <Link href={`${base}/${s.id}`}>{formatDate(s.createdAt)}</Link>
                  {s.spam && <Badge tone="warn">Spam</Badge>}
                  {s.spam && (
                    <Button
                      size="small"
                      onClick={() => notSpam.mutate(s.id)}
                      disabled={!canWrite || notSpam.isPending}
                      aria-label={`Not spam: ${summaryOf(s.data).slice(0, 60)}`}
                    >
                      Not spam
                    </Button>
                  )}
                </td>
                <td>
                  {summaryOf(s.data)}
                  <SpamReasons reasons={s.spamReasons} />
                </td>
                <td>{s.files.length}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <div className="actions">
        <button type="button" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" disabled={!page.data?.nextCursor} onClick={() => page.data?.nextCursor && setCursors([...cursors, page.data.nextCursor])}>
          Next page
        </button>
      </div>
    </>
  );
}

/** The value once it has not changed for `ms`. */
function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}
