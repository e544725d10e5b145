import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, memo, useDeferredValue, useMemo, useState } from 'react';
import { Link } from 'wouter';
import { api, type Environment, type FlagEntry, type FlagType } from '../api.ts';
import { ConfirmDelete, ErrorMessage, Field, Loading, Section } from '../ui.tsx';
import { ProjectHeader, useProject } from './Projects.tsx';
import { useCanWrite } from '../session.ts';
import { isTargeted } from '../targeting/v1-note.tsx';
import { fromVariantDrafts, toVariantDrafts, type VariantDraft, VariantsEditor } from '../targeting/variants.tsx';
import { problemsOf, ProblemsProvider } from '../targeting/problems.tsx';
import { SelectInput } from '../targeting/fields.tsx';

export function ProjectFlagsScreen({ params }: { params: { key: string } }) {
  const project = useProject(params.key);
  const canWrite = useCanWrite();
  const flags = useQuery({
    queryKey: ['flags', params.key],
    queryFn: () => api<{ flags: FlagEntry[] }>('GET', `/projects/${encodeURIComponent(params.key)}/flags`),
  });
  const [search, setSearch] = useState('');
  const deferred = useDeferredValue(search);
  const [deleting, setDeleting] = useState<string | undefined>();
  const toggle = useMutation({
    mutationFn: ({ slug, env, enabled }: { slug: string; env: string; enabled: boolean }) =>
      api('PATCH', `/projects/${encodeURIComponent(params.key)}/environments/${encodeURIComponent(env)}/flags/${encodeURIComponent(slug)}`, { enabled }),
  });
  const remove = useMutation({
    mutationFn: (slug: string) => api('DELETE', `/projects/${encodeURIComponent(params.key)}/flags/${encodeURIComponent(slug)}`),
    onSuccess: () => setDeleting(undefined),
  });
  const visible = useMemo(() => {
    const all = flags.data?.flags ?? [];
    const needle = deferred.trim().toLowerCase();
    if (!needle) return all;
    return all.filter((f) => f.slug.toLowerCase().includes(needle) || f.environments.some((e) => e.description.toLowerCase().includes(needle)));
  }, [flags.data, deferred]);

  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  const environments = project.data.environments;
  const pending = toggle.isPending ? `${toggle.variables.slug}\n${toggle.variables.env}` : undefined;

  return (
    <>
      <ProjectHeader project={project.data} current="flags" />
      {canWrite ? (
        <CreateFlag projectKey={params.key} />
      ) : (
        <p className="muted" role="note">
          You are a viewer: you see the flags but cannot change them.
        </p>
      )}
      <div className="toolbar">
        <Field label="Search flags" type="search" value={search} onChange={setSearch} hint="By slug or description" />
        <p className="muted" aria-live="polite">
          {flags.data ? `${visible.length} of ${flags.data.flags.length} flags` : ''}
        </p>
      </div>
      <ErrorMessage error={toggle.error} />
      {deleting && (
        <ConfirmDelete
          what="flag"
          name={deleting}
          action="Delete flag"
          pending={remove.isPending}
          error={remove.error}
          onConfirm={() => remove.mutate(deleting)}
          onCancel={() => {
            remove.reset();
            setDeleting(undefined);
          }}
        />
      )}
      {flags.isPending && <Loading what="flags" />}
      <ErrorMessage error={flags.error} />
      {flags.data && flags.data.flags.length === 0 && <p className="muted">No flag yet: create the first one above.</p>}
      {visible.length > 0 && (
        <table className="flags">
          <thead>
            <tr>
              <th scope="col">Flag</th>
              {environments.map((e) => (
                <th scope="col" key={e.key}>
                  {e.name}
                </th>
              ))}
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {visible.map((flag) => (
              <FlagRow
                key={flag.slug}
                projectKey={params.key}
                flag={flag}
                environments={environments}
                pending={pending?.startsWith(`${flag.slug}\n`) ? pending : undefined}
                canWrite={canWrite}
                onToggle={(env, enabled) => toggle.mutate({ slug: flag.slug, env, enabled })}
                onDelete={() => setDeleting(flag.slug)}
              />
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

const FlagRow = memo(function FlagRow({
  projectKey,
  flag,
  environments,
  pending,
  canWrite,
  onToggle,
  onDelete,
}: {
  projectKey: string;
  flag: FlagEntry;
  environments: Environment[];
  pending: string | undefined;
  canWrite: boolean;
  onToggle: (env: string, enabled: boolean) => void;
  onDelete: () => void;
}) {
  const byEnv = new Map(flag.environments.map((e) => [e.environment.key, e]));
  const now = Date.now();
  const expired = flag.environments.some((e) => e.expiredAt && Date.parse(e.expiredAt) < now);
  const preview = flag.environments.some((e) => e.isPreview);
  return (
    <tr>
      <th scope="row">
        <Link href={`/projects/${projectKey}/flags/${encodeURIComponent(flag.slug)}`}>{flag.slug}</Link>
        {expired && <span className="badge warn">Expired</span>}
        {preview && <span className="badge">Preview</span>}
        {flag.environments[0] && flag.environments[0].type !== 'boolean' && <span className="badge">{flag.environments[0].type}</span>}
        <div className="muted small-text">{flag.environments[0]?.description}</div>
      </th>
      {environments.map((env) => {
        const value = byEnv.get(env.key);
        const busy = pending === `${flag.slug}\n${env.key}`;
        const targeted = value !== undefined && isTargeted(value);
        const noteId = `rules-${flag.slug}-${env.key}`;
        return (
          <td key={env.key}>
            {value && (
              <button
                type="button"
                role="switch"
                aria-checked={value.enabled}
                aria-label={`${flag.slug} in ${env.name}`}
                aria-describedby={targeted ? noteId : undefined}
                className="switch"
                disabled={busy || !canWrite}
                onClick={() => onToggle(env.key, !value.enabled)}
              >
                <span aria-hidden="true">{value.enabled ? 'On' : 'Off'}</span>
              </button>
            )}
            {targeted && (
              <small className="muted rules-note" id={noteId}>
                Rules: OpenFeature evaluates them; <code>/v1</code> answers this switch
              </small>
            )}
          </td>
        );
      })}
      <td>
        {canWrite && (
          <button type="button" className="small danger-text" onClick={onDelete}>
            Delete <span className="sr-only">{flag.slug}</span>
          </button>
        )}
      </td>
    </tr>
  );
});

const DEFAULT_VARIANTS: Record<Exclude<FlagType, 'boolean'>, Record<string, string | number | Record<string, unknown>>> = {
  string: { control: 'control', treatment: 'treatment' },
  number: { low: 1, high: 2 },
  object: { control: {}, treatment: {} },
};

function CreateFlag({ projectKey }: { projectKey: string }) {
  const [slug, setSlug] = useState('');
  const [description, setDescription] = useState('');
  const [type, setType] = useState<FlagType>('boolean');
  const [variants, setVariants] = useState<VariantDraft[]>([]);
  const [defaultVariant, setDefaultVariant] = useState('');
  const [local, setLocal] = useState<ReturnType<typeof problemsOf>>([]);
  const create = useMutation({
    mutationFn: (body: Record<string, unknown>) => api('POST', `/projects/${encodeURIComponent(projectKey)}/flags`, body),
    onSuccess: () => {
      setSlug('');
      setDescription('');
    },
  });
  const chooseType = (next: FlagType) => {
    setType(next);
    if (next === 'boolean') return setVariants([]);
    const drafts = toVariantDrafts(next, DEFAULT_VARIANTS[next]);
    setVariants(drafts);
    setDefaultVariant(drafts[0]!.name);
  };
  const names = variants.map((v) => v.name.trim());
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body: Record<string, unknown> = { slug: slug.trim(), description };
    if (type !== 'boolean') {
      const typed = fromVariantDrafts(type, variants);
      if (!names.includes(defaultVariant)) typed.problems.push({ field: 'defaultVariant', reason: 'Choose one of the variants' });
      setLocal(typed.problems);
      if (typed.problems.length > 0) return;
      Object.assign(body, { type, variants: typed.variants, defaultVariant });
    } else setLocal([]);
    create.mutate(body);
  };
  return (
    <Section title="New flag">
      <ProblemsProvider value={[...local, ...problemsOf(create.error)]}>
        <form onSubmit={submit}>
          <div className="row">
            <Field label="Slug" value={slug} onChange={setSlug} required hint="Letters, digits, . _ - (created off in every environment)" />
            <Field label="Description" value={description} onChange={setDescription} />
            <SelectInput label="Type" value={type} onChange={(v) => chooseType(v as FlagType)} hint="What OpenFeature's get…Value returns">
              <option value="boolean">boolean (on/off)</option>
              <option value="string">string</option>
              <option value="number">number</option>
              <option value="object">object (JSON)</option>
            </SelectInput>
          </div>
          {type !== 'boolean' && (
            <>
              <VariantsEditor type={type} variants={variants} onChange={setVariants} owner="the new flag" />
              <SelectInput
                label="Default serve"
                path="defaultVariant"
                value={defaultVariant}
                onChange={setDefaultVariant}
                hint="Served once the flag is switched on"
              >
                {!names.includes(defaultVariant) && <option value={defaultVariant}>Choose a variant</option>}
                {names.map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
              </SelectInput>
            </>
          )}
          {local.length > 0 && (
            <div role="alert" className="error">
              <p>Not created: see the fields marked above.</p>
            </div>
          )}
          <button type="submit" className="primary" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create flag'}
          </button>
        </form>
      </ProblemsProvider>
      <ErrorMessage error={create.error} />
    </Section>
  );
}
