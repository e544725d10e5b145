import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearch } from 'wouter';
import { api, type Submission } from '../api.ts';
import { ErrorMessage, formatDate, Loading, Table } from '../ui.tsx';
import { FormHeader, useForm } from './Forms.tsx';

const PAGE = 25;

/** A short line of a submission's fields for the inbox. */
export function summaryOf(data: Record<string, unknown>): string {
  return Object.entries(data)
    .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : String(value)}`)
    .join(' · ')
    .slice(0, 160);
}

export function SubmissionsScreen({ params }: { params: { key: string } }) {
  const form = useForm(params.key);
  const spam = new URLSearchParams(useSearch()).get('spam') === 'true';
  // Cursors of the pages before this one, so that "Previous page" can go back.
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const page = useQuery({
    queryKey: ['submissions', params.key, spam, cursor],
    queryFn: () =>
      api<{ submissions: Submission[]; nextCursor: string | null }>(
        'GET',
        `/forms/${encodeURIComponent(params.key)}/submissions?limit=${PAGE}&spam=${spam ? 'true' : 'all'}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    placeholderData: keepPreviousData,
  });
  if (form.isPending) return <Loading what="the form" />;
  if (form.error) return <ErrorMessage error={form.error} />;
  const base = `/forms/${params.key}/submissions`;
  return (
    <>
      <FormHeader form={form.data} current="submissions" />
      <div className="toolbar">
        <nav aria-label="Submission filter" className="tabs">
          <Link href={base} aria-current={!spam ? 'page' : undefined} onClick={() => setCursors([undefined])}>
            All
          </Link>
          <Link href={`${base}?spam=true`} aria-current={spam ? 'page' : undefined} onClick={() => setCursors([undefined])}>
            Spam
          </Link>
        </nav>
        <div className="actions">
          <a href={`/admin/v1/forms/${encodeURIComponent(params.key)}/submissions.csv${spam ? '?spam=true' : ''}`} download className="button">
            Export CSV
          </a>
          <a href={`/admin/v1/forms/${encodeURIComponent(params.key)}/submissions.json${spam ? '?spam=true' : ''}`} download className="button">
            Export JSON
          </a>
        </div>
      </div>
      {page.isPending && <Loading what="submissions" />}
      <ErrorMessage error={page.error} />
      {page.data && page.data.submissions.length === 0 && <p className="muted">{spam ? 'No spam.' : 'No submission yet.'}</p>}
      {page.data && page.data.submissions.length > 0 && (
        <Table>
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Fields</th>
              <th scope="col">Files</th>
            </tr>
          </thead>
          <tbody>
            {page.data.submissions.map((s) => (
              <tr key={s.id}>
                <td>
                  <Link href={`${base}/${s.id}`}>{formatDate(s.createdAt)}</Link>
                  {s.spam && <span className="badge warn">Spam</span>}
                </td>
                <td>{summaryOf(s.data)}</td>
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
