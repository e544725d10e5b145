import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, type Form } from '../api.ts';
import { ErrorMessage, Field, formatDate, Loading, Section, Table } from '../ui.tsx';
import { useCanWrite } from '../session.ts';

export function FormsScreen() {
  const canWrite = useCanWrite();
  const [, navigate] = useLocation();
  const forms = useQuery({ queryKey: ['forms'], queryFn: () => api<{ forms: Form[] }>('GET', '/forms') });
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => api<Form>('POST', '/forms', { name: name.trim() }),
    onSuccess: (form) => navigate(`/forms/${form.key}`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <>
      <h1>Forms</h1>
      {forms.isPending && <Loading what="forms" />}
      <ErrorMessage error={forms.error} />
      {forms.data && forms.data.forms.length === 0 && <p className="muted">No form yet: create the first one below.</p>}
      {forms.data && forms.data.forms.length > 0 && (
        <Table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Submissions</th>
              <th scope="col">Spam</th>
              <th scope="col">Accepting</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {forms.data.forms.map((f) => (
              <tr key={f.key}>
                <th scope="row">
                  <Link href={`/forms/${f.key}`}>{f.name}</Link>
                </th>
                <td>
                  <Link href={`/forms/${f.key}/submissions`} aria-label={`${f.submissionCount ?? 0} submissions of ${f.name}`}>
                    {f.submissionCount ?? 0}
                  </Link>
                </td>
                <td>{f.spamCount ?? 0}</td>
                <td>{f.enabled ? 'Yes' : 'No'}</td>
                <td>{formatDate(f.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <Section title="New form">
        <form onSubmit={submit} className="inline">
          <Field label="Form name" value={name} onChange={setName} required />
          <button type="submit" className="primary" disabled={create.isPending || !canWrite}>
            {create.isPending ? 'Creating…' : 'Create form'}
          </button>
        </form>
        <ErrorMessage error={create.error} />
      </Section>
    </>
  );
}

export function useForm(key: string) {
  return useQuery({ queryKey: ['form', key], queryFn: () => api<Form>('GET', `/forms/${encodeURIComponent(key)}`) });
}

export function FormHeader({ form, current }: { form: Form; current: 'settings' | 'submissions' }) {
  return (
    <>
      <p className="crumbs">
        <Link href="/forms">Forms</Link> /
      </p>
      <h1>{current === 'submissions' ? `${form.name} submissions` : form.name}</h1>
      <nav aria-label="Form" className="tabs">
        <Link href={`/forms/${form.key}`} aria-current={current === 'settings' ? 'page' : undefined}>
          Settings
        </Link>
        <Link href={`/forms/${form.key}/submissions`} aria-current={current === 'submissions' ? 'page' : undefined}>
          Submissions
        </Link>
      </nav>
    </>
  );
}
