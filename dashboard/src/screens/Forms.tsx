import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, type Form } from '../api.ts';
import {
  Badge,
  Breadcrumbs,
  Button,
  DateText,
  EmptyState,
  ErrorMessage,
  Field,
  Loading,
  NavTabs,
  problemsOf,
  ProblemsProvider,
  rules,
  Section,
  Table,
} from '../ui/index.ts';
import { useCanWrite } from '../session.ts';

export function FormsScreen() {
  const canWrite = useCanWrite();
  const [, navigate] = useLocation();
  const forms = useQuery({ queryKey: ['forms'], queryFn: () => api<{ forms: Form[] }>('GET', '/forms') });
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => api<Form>('POST', '/forms', { name: name.trim() }),
    meta: { success: 'Created the form', error: false, invalidates: [['forms'], ['audit']] },
    onSuccess: (form) => navigate(`/forms/${form.key}`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!rules.required(name)) create.mutate();
  };
  return (
    <>
      <h1>Forms</h1>
      {forms.isPending && <Loading what="forms" />}
      <ErrorMessage error={forms.error} />
      {forms.data && forms.data.forms.length === 0 && (
        <EmptyState title="No form yet">
          A form endpoint takes submissions from any HTML form or script (contact, sign-up, feedback) with spam protection and notifications. Create the first
          one below.
        </EmptyState>
      )}
      {forms.data && forms.data.forms.length > 0 && (
        <Table label="Forms">
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
                <td>{f.enabled ? <Badge tone="ok">Yes</Badge> : <Badge tone="muted">No</Badge>}</td>
                <td>
                  <DateText iso={f.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <Section title="New form">
        <ProblemsProvider value={problemsOf(create.error)}>
          <form onSubmit={submit} className="inline" aria-label="New form">
            <Field label="Form name" path="name" value={name} onChange={setName} validate={rules.required} required />
            <Button type="submit" variant="primary" busy={create.isPending} busyText="Creating…" disabled={!canWrite}>
              Create form
            </Button>
          </form>
        </ProblemsProvider>
        <ErrorMessage error={create.error} inline={['name']} />
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
      <Breadcrumbs
        items={[
          { label: 'Forms', href: '/forms' },
          { label: form.name, href: `/forms/${form.key}` },
          ...(current === 'submissions' ? [{ label: 'Submissions' }] : []),
        ]}
      />
      <h1>{current === 'submissions' ? `${form.name} submissions` : form.name}</h1>
      <NavTabs
        label="Form"
        current={current}
        items={[
          { key: 'settings', href: `/forms/${form.key}`, title: 'Settings' },
          { key: 'submissions', href: `/forms/${form.key}/submissions`, title: 'Submissions' },
        ]}
      />
    </>
  );
}
