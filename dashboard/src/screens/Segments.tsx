import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useEffect, useId, useState } from 'react';
import { api, type Condition, type FieldProblem, type Segment } from '../api.ts';
import {
  ConfirmDelete,
  EmptyState,
  ErrorMessage,
  Field,
  formatDate,
  Loading,
  problemsOf,
  ProblemsProvider,
  Section,
  Select,
  Table,
  TextArea,
} from '../ui/index.ts';
import { useCanWrite } from '../session.ts';
import { type ConditionDraft, describeCondition, emptyCondition, fromDraft, toDraft } from '../targeting/conditions.ts';
import { ConditionsEditor } from '../targeting/ConditionsEditor.tsx';
import { ProjectHeader, useProject } from './Projects.tsx';

/** A project's segments: reusable groups of conditions that rules of any flag and environment name. */
export default function SegmentsScreen({ projectKey }: { projectKey: string }) {
  const project = useProject(projectKey);
  const canWrite = useCanWrite();
  const segments = useSegments(projectKey);
  const [editing, setEditing] = useState<string | undefined>();
  const [deleting, setDeleting] = useState<string | undefined>();
  const remove = useMutation({
    mutationFn: (key: string) => api('DELETE', `/projects/${encodeURIComponent(projectKey)}/segments/${encodeURIComponent(key)}`),
    // A segment in use cannot be deleted (409), so no flag changes; the dialog shows a refusal.
    meta: { success: deleting && `Deleted segment ${deleting}`, error: false, invalidates: [['segments', projectKey], ['audit']] },
    onSuccess: () => setDeleting(undefined),
  });
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  const list = segments.data?.segments ?? [];
  const edited = list.find((s) => s.key === editing);
  return (
    <>
      <ProjectHeader project={project.data} current="segments" />
      <p className="muted">
        A segment is a named group of users described by conditions on their attributes (<code>user.country is one of DE, AT</code>). Rules of every flag, in
        every environment, can target it; a change to a segment applies to all of them at once.
      </p>
      {!canWrite && (
        <p className="muted" role="note">
          You are a viewer: you see the segments but cannot change them.
        </p>
      )}
      {deleting && (
        <ConfirmDelete
          what="segment"
          name={deleting}
          action="Delete segment"
          pending={remove.isPending}
          error={remove.error}
          onConfirm={() => remove.mutate(deleting)}
          onCancel={() => {
            remove.reset();
            setDeleting(undefined);
          }}
        />
      )}
      {segments.isPending && <Loading what="segments" />}
      <ErrorMessage error={segments.error} />
      {segments.data && list.length === 0 && (
        <EmptyState title="No segment yet">Create the first one below: a name and the conditions its users meet.</EmptyState>
      )}
      {list.length > 0 && (
        <Table>
          <caption className="sr-only">Segments of {project.data.name}</caption>
          <thead>
            <tr>
              <th scope="col">Segment</th>
              <th scope="col">Users who match</th>
              <th scope="col">Changed</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((s) => (
              <tr key={s.key}>
                <th scope="row">
                  {s.name} <code className="muted">{s.key}</code>
                  {s.description && <div className="muted small-text">{s.description}</div>}
                </th>
                <td>
                  {s.match === 'all' ? 'all of' : 'any of'}
                  <ul className="plain">
                    {s.conditions.map((c, i) => (
                      <li key={i}>
                        <code>{describeCondition(c)}</code>
                      </li>
                    ))}
                  </ul>
                </td>
                <td>{formatDate(s.updatedAt)}</td>
                <td>
                  <div className="rule-actions">
                    <button type="button" className="small" onClick={() => setEditing(s.key)}>
                      Edit <span className="sr-only">{s.key}</span>
                    </button>
                    {canWrite && (
                      <button type="button" className="small danger-text" onClick={() => setDeleting(s.key)}>
                        Delete <span className="sr-only">{s.key}</span>
                      </button>
                    )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {edited ? (
        <SegmentForm key={`${edited.key}:${edited.updatedAt}`} projectKey={projectKey} segment={edited} onDone={() => setEditing(undefined)} />
      ) : (
        canWrite && <SegmentForm key="new" projectKey={projectKey} onDone={() => undefined} />
      )}
    </>
  );
}

export function useSegments(projectKey: string) {
  return useQuery({
    queryKey: ['segments', projectKey],
    queryFn: () => api<{ segments: Segment[] }>('GET', `/projects/${encodeURIComponent(projectKey)}/segments`),
  });
}

/** Creates a segment, or edits `segment` (its key stays). */
function SegmentForm({ projectKey, segment, onDone }: { projectKey: string; segment?: Segment; onDone: () => void }) {
  const canWrite = useCanWrite();
  const [key, setKey] = useState(segment?.key ?? '');
  const [name, setName] = useState(segment?.name ?? '');
  const [description, setDescription] = useState(segment?.description ?? '');
  const [match, setMatch] = useState<'all' | 'any'>(segment?.match ?? 'all');
  const [conditions, setConditions] = useState<ConditionDraft[]>(segment ? segment.conditions.map(toDraft) : [emptyCondition()]);
  const [local, setLocal] = useState<FieldProblem[]>([]);
  const path = segment
    ? `/projects/${encodeURIComponent(projectKey)}/segments/${encodeURIComponent(segment.key)}`
    : `/projects/${encodeURIComponent(projectKey)}/segments`;
  const save = useMutation({
    mutationFn: (body: Record<string, unknown>) => api<Segment>(segment ? 'PATCH' : 'POST', path, body),
    // The flag list carries each flag's flagd portability, which depends on the segments its rules name.
    meta: {
      success: segment ? `Saved segment ${segment.key}` : `Created segment ${key.trim()}`,
      error: false,
      invalidates: [['segments', projectKey], ['flags', projectKey], ['audit']],
    },
    onSuccess: () => {
      if (segment) return onDone();
      setKey('');
      setName('');
      setDescription('');
      setMatch('all');
      setConditions([emptyCondition()]);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problems: FieldProblem[] = [];
    const typed: Condition[] = [];
    conditions.forEach((c, i) => {
      const r = fromDraft(c);
      if (r.problem !== undefined) problems.push({ field: `conditions.${i}.values`, reason: r.problem });
      else if (r.condition.attribute === '')
        problems.push({ field: `conditions.${i}.attribute`, reason: 'Enter the attribute (a dot path such as user.country)' });
      else typed.push(r.condition);
    });
    setLocal(problems);
    if (problems.length > 0) return save.reset();
    const body: Record<string, unknown> = { name: name.trim(), description, match, conditions: typed };
    if (!segment) body.key = key.trim();
    save.mutate(body);
  };
  const owner = segment || key.trim() ? `segment ${segment?.key ?? key.trim()}` : 'the new segment';
  const formId = useId();
  // Edit opens the form under the list: the keyboard goes there with it.
  const editingKey = segment?.key;
  useEffect(() => {
    if (editingKey !== undefined) document.getElementById(formId)?.querySelector('input')?.focus();
  }, [editingKey, formId]);
  return (
    <Section title={segment ? `Edit segment ${segment.key}` : 'New segment'}>
      <ProblemsProvider value={[...local, ...problemsOf(save.error)]}>
        <form onSubmit={submit} id={formId}>
          <div className="row">
            {!segment && <Field label="Segment key" path="key" value={key} onChange={setKey} hint="Letters, digits, . _ - (used by rules and flagd's $ref)" />}
            <Field label="Segment name" path="name" value={name} onChange={setName} />
            <Select label="Users match when" path="match" value={match} onChange={(v) => setMatch(v as 'all' | 'any')}>
              <option value="all">all conditions hold</option>
              <option value="any">any condition holds</option>
            </Select>
          </div>
          <TextArea label="Segment description" path="description" value={description} onChange={setDescription} rows={2} />
          <h3>Conditions</h3>
          <ConditionsEditor conditions={conditions} onChange={setConditions} path="conditions" owner={owner} disabled={!canWrite} />
          {local.length > 0 && (
            <div role="alert" className="error">
              <p>Not saved: see the fields marked above.</p>
            </div>
          )}
          <ErrorMessage error={save.error} />
          <div className="actions">
            <button type="submit" className="primary" disabled={save.isPending || !canWrite}>
              {save.isPending ? 'Saving…' : segment ? `Save segment ${segment.key}` : 'Create segment'}
            </button>
            {segment && (
              <button type="button" onClick={onDone}>
                Cancel
              </button>
            )}
          </div>
        </form>
      </ProblemsProvider>
    </Section>
  );
}
