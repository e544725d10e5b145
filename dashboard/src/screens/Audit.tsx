import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Project } from '../api.ts';
import { useSession } from '../session.ts';
import { Breadcrumbs, Button, ConfirmDialog, Field, plural, rules, Section, Select } from '../ui/index.ts';
import { History } from './History.tsx';

const ENTITIES = [
  'project',
  'environment',
  'flag',
  'api_key',
  'form',
  'submission',
  'personal_data',
  'member',
  'invitation',
  'access_token',
  'settings',
  'sign_in',
];

/** Owners: the whole instance's audit log, and the personal-data export and erasure (docs/api.md). */
export default function AuditScreen() {
  const session = useSession();
  const projects = useQuery({ queryKey: ['projects'], queryFn: () => api<{ projects: Project[] }>('GET', '/projects') });
  const [project, setProject] = useState('');
  const [entity, setEntity] = useState('');
  if (session.data && session.data.role !== 'owner') {
    return (
      <>
        <h1>Audit log</h1>
        <p>Only owners see the whole instance's log; each project's history is on its History tab.</p>
      </>
    );
  }
  const environments = new Map((projects.data?.projects ?? []).flatMap((p) => p.environments.map((e) => [e.key, `${e.name} (${p.name})`] as const)));
  const query = [project && `project=${encodeURIComponent(project)}`, entity && `entity=${encodeURIComponent(entity)}`].filter(Boolean).join('&');
  return (
    <>
      <Breadcrumbs items={[{ label: 'Audit log' }]} />
      <h1>Audit log</h1>
      <p className="muted">Every change and sign-in on this instance, newest first. Entries are kept for FLAGPOST_AUDIT_RETENTION_DAYS.</p>
      <div className="filters">
        <Select label="Project" value={project} onChange={setProject}>
          <option value="">All projects and the rest</option>
          {(projects.data?.projects ?? []).map((p) => (
            <option key={p.key} value={p.key}>
              {p.name}
            </option>
          ))}
        </Select>
        <Select label="Kind" value={entity} onChange={setEntity}>
          <option value="">Everything</option>
          {ENTITIES.map((e) => (
            <option key={e} value={e}>
              {e.replace(/_/g, ' ')}
            </option>
          ))}
        </Select>
      </div>
      <History
        key={query}
        query={query}
        names={{ environments, projects: new Map((projects.data?.projects ?? []).map((p) => [p.key, p.name])) }}
        label="Audit log"
      />
      <PersonalData />
    </>
  );
}

interface ExportAnswer {
  email: string;
  submissions: Array<{ id: string; form: { key: string; name: string }; createdAt: string }>;
}

/** Access and erasure requests (GDPR articles 15 and 17) for one e-mail address. */
function PersonalData() {
  const [email, setEmail] = useState('');
  const [asking, setAsking] = useState(false);
  const exported = useMutation({
    mutationFn: (address: string) => api<ExportAnswer>('POST', '/personal-data/export', { email: address }),
    meta: { invalidates: [['audit']], error: 'Not exported' },
  });
  const erase = useMutation({
    mutationFn: (address: string) => api<{ deleted: number }>('POST', '/personal-data/erase', { email: address }),
    meta: { invalidates: [['audit'], ['submissions']], error: 'Not erased' },
    onSuccess: () => setAsking(false),
  });
  const download = (answer: ExportAnswer) => {
    const url = URL.createObjectURL(new Blob([JSON.stringify(answer, null, 2)], { type: 'application/json' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `personal-data-${answer.email}.json`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  const address = email.trim();
  return (
    <Section title="Personal data">
      <p className="muted">Find, export or erase every form submission that holds one person's e-mail address. Both requests are recorded in the log above.</p>
      <form
        className="inline"
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          if (!rules.email(address) && address) exported.mutate(address);
        }}
      >
        <Field label="Person's e-mail address" type="email" value={email} onChange={setEmail} validate={rules.email} required autoComplete="off" />
        <Button type="submit" variant="primary" busy={exported.isPending} busyText="Searching…">
          Find and export
        </Button>
        <Button variant="danger" disabled={address === '' || !!rules.email(address)} onClick={() => setAsking(true)}>
          Erase…
        </Button>
      </form>
      {exported.data && (
        <div className="notice" role="status">
          <p>
            {plural(exported.data.submissions.length, 'submission')} hold {exported.data.email}
            {exported.data.submissions.length > 0 && ` (${[...new Set(exported.data.submissions.map((s) => s.form.name))].join(', ')})`}.
          </p>
          <Button onClick={() => download(exported.data!)}>Download the export (JSON)</Button>
        </div>
      )}
      {erase.data && <p role="status">Erased {plural(erase.data.deleted, 'submission')}.</p>}
      <ConfirmDialog
        open={asking}
        title={`Erase the data of ${address}?`}
        typeName={address}
        confirmLabel="Erase their submissions"
        pendingLabel="Erasing…"
        onConfirm={() => erase.mutate(address)}
        onCancel={() => setAsking(false)}
        pending={erase.isPending}
        error={erase.error}
      >
        <p>Every submission that holds this address is deleted with its files and pending deliveries. This cannot be undone.</p>
      </ConfirmDialog>
    </Section>
  );
}
