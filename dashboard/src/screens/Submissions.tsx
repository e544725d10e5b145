import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useDeferredValue, useEffect, useState } from 'react';
import { Link, useSearch } from 'wouter';
import { api, type Submission } from '../api.ts';
import { Badge, EmptyState, ErrorMessage, Field, formatDate, Loading, NavTabs, Select, Table } from '../ui/index.ts';
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
  // The tab: everything, the inbox without spam, or spam only; the exports ask for the same.
  const raw = new URLSearchParams(useSearch()).get('spam');
  const spam: 'all' | 'true' | 'false' = raw === 'true' || raw === 'false' ? raw : 'all';
  const [search, setSearch] = useState('');
  const [files, setFiles] = useState('');
  const needle = useDeferredValue(search.trim().toLowerCase());
  // Cursors of the pages before this one, so that "Previous page" can go back.
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const cursor = cursors[cursors.length - 1];
  useEffect(() => setCursors([undefined]), [spam]);
  const page = useQuery({
    queryKey: ['submissions', params.key, spam, cursor],
    queryFn: () =>
      api<{ submissions: Submission[]; nextCursor: string | null }>(
        'GET',
        `/forms/${encodeURIComponent(params.key)}/submissions?limit=${PAGE}&spam=${spam}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    placeholderData: keepPreviousData,
  });
  if (form.isPending) return <Loading what="the form" />;
  if (form.error) return <ErrorMessage error={form.error} />;
  const base = `/forms/${params.key}/submissions`;
  const shown = (page.data?.submissions ?? []).filter(
    (s) => (files === '' || (files === 'with') === s.files.length > 0) && (needle === '' || JSON.stringify(s.data).toLowerCase().includes(needle)),
  );
  return (
    <>
      <FormHeader form={form.data} current="submissions" />
      <div className="toolbar">
        <NavTabs
          label="Submission filter"
          current={spam}
          items={[
            { key: 'all', href: base, title: 'All' },
            { key: 'false', href: `${base}?spam=false`, title: 'Not spam' },
            { key: 'true', href: `${base}?spam=true`, title: 'Spam' },
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
        <Field label="Search this page" type="search" value={search} onChange={setSearch} hint="In the fields of the submissions shown · press / to search" />
        <Select label="Files" value={files} onChange={setFiles}>
          <option value="">With or without</option>
          <option value="with">With files</option>
          <option value="without">Without files</option>
        </Select>
      </div>
      {page.isPending && <Loading what="submissions" />}
      <ErrorMessage error={page.error} />
      {page.data && page.data.submissions.length === 0 && (
        <EmptyState title={spam === 'true' ? 'No spam' : 'No submission yet'}>
          {spam === 'true'
            ? 'Submissions caught by the honeypot, the CAPTCHA or marked by hand show here.'
            : 'Point an HTML form at the endpoint on the Settings tab.'}
        </EmptyState>
      )}
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
