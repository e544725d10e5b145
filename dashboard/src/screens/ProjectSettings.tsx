import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useLocation } from 'wouter';
import { api, type Environment, type Project } from '../api.ts';
import { useCanWrite, useSession } from '../session.ts';
import { Button, ConfirmDialog, Field, problemsOf, ProblemsProvider, rules, Section, toast } from '../ui/index.ts';

/** The project's name, and the deletion of the project (owners) and of one of its environments. */
export function ProjectSettings({ project }: { project: Project }) {
  const canWrite = useCanWrite();
  const owner = useSession().data?.role === 'owner';
  const [, navigate] = useLocation();
  const [name, setName] = useState(project.name);
  const [deleting, setDeleting] = useState(false);
  const rename = useMutation({
    mutationFn: (value: string) => api<Project>('PATCH', `/projects/${encodeURIComponent(project.key)}`, { name: value }),
    meta: { success: 'Renamed the project', error: false, invalidates: [['projects'], ['project', project.key], ['audit']] },
  });
  const remove = useMutation({
    mutationFn: () => api('DELETE', `/projects/${encodeURIComponent(project.key)}`),
    meta: { error: false, invalidates: [['projects'], ['audit']] },
    onSuccess: () => {
      toast.success(`Deleted project ${project.name}`);
      navigate('/projects');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!rules.required(name)) rename.mutate(name.trim());
  };
  return (
    <Section title="Project settings">
      <ProblemsProvider value={problemsOf(rename.error)}>
        <form onSubmit={submit} className="inline">
          <Field label="Project name" path="name" value={name} onChange={setName} validate={rules.required} required disabled={!canWrite} />
          <Button type="submit" busy={rename.isPending} busyText="Renaming…" disabled={!canWrite || name.trim() === project.name}>
            Rename project
          </Button>
        </form>
      </ProblemsProvider>
      <p className="muted small-text">The project key stays: its clients keep working.</p>
      {owner && (
        <>
          <Button variant="danger" onClick={() => setDeleting(true)}>
            Delete project…
          </Button>
          <ConfirmDialog
            open={deleting}
            title={`Delete project ${project.name}?`}
            typeName={project.name}
            confirmLabel="Delete project"
            onConfirm={() => remove.mutate()}
            onCancel={() => {
              remove.reset();
              setDeleting(false);
            }}
            pending={remove.isPending}
            error={remove.error}
          >
            <p>
              Its {project.environments.length} environments, every flag, segment, API key and code reference go with it, and its keys stop answering. The
              history stays. This cannot be undone.
            </p>
          </ConfirmDialog>
        </>
      )}
    </Section>
  );
}

/** The delete button of one environment, with its type-the-name confirmation. */
export function DeleteEnvironment({ project, environment }: { project: Project; environment: Environment }) {
  const canWrite = useCanWrite();
  const [asking, setAsking] = useState(false);
  const remove = useMutation({
    mutationFn: () => api('DELETE', `/projects/${encodeURIComponent(project.key)}/environments/${encodeURIComponent(environment.key)}`),
    meta: { error: false, invalidates: [['project', project.key], ['projects'], ['flags', project.key], ['audit']] },
    onSuccess: () => {
      toast.success(`Deleted environment ${environment.name}`);
      setAsking(false);
    },
  });
  if (!canWrite || project.environments.length <= 1) return null;
  return (
    <>
      <Button size="small" variant="danger-text" onClick={() => setAsking(true)}>
        Delete <span className="sr-only">environment {environment.name}</span>
      </Button>
      <ConfirmDialog
        open={asking}
        title={`Delete environment ${environment.name}?`}
        typeName={environment.name}
        confirmLabel="Delete environment"
        onConfirm={() => remove.mutate()}
        onCancel={() => {
          remove.reset();
          setAsking(false);
        }}
        pending={remove.isPending}
        error={remove.error}
      >
        <p>Every flag's value in {environment.name} and its sync token go with it, and its key stops answering. This cannot be undone.</p>
      </ConfirmDialog>
    </>
  );
}
