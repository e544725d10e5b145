import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type CSSProperties, type FormEvent, memo, useCallback, useDeferredValue, useMemo, useRef, useState } from 'react';
import { Link } from 'wouter';
import { api, type EnvFlag, type Environment, type FlagEntry, type FlagType } from '../api.ts';
import {
  Badge,
  ConfirmDelete,
  EmptyState,
  ErrorMessage,
  Field,
  KeyHint,
  Loading,
  problemsOf,
  ProblemsProvider,
  rules,
  Section,
  Select,
  Switch,
  Table,
  toast,
} from '../ui/index.ts';
import { ProjectHeader, useProject } from './Projects.tsx';
import { type FlagWrite, ProtectedWriteDialog } from './ProtectedWrite.tsx';
import { useCanWrite } from '../session.ts';
import { isTargeted } from '../targeting/v1-note.tsx';
import { fromVariantDrafts, toVariantDrafts, type VariantDraft, VariantsEditor } from '../targeting/variants.tsx';

export function ProjectFlagsScreen({ params }: { params: { key: string } }) {
  const project = useProject(params.key);
  const canWrite = useCanWrite();
  const flags = useQuery({
    queryKey: ['flags', params.key],
    queryFn: () => api<{ flags: FlagEntry[] }>('GET', `/projects/${encodeURIComponent(params.key)}/flags`),
  });
  const [search, setSearch] = useState('');
  const [tag, setTag] = useState('');
  const [archived, setArchived] = useState(false);
  const deferred = useDeferredValue(search);
  const [deleting, setDeleting] = useState<string | undefined>();
  const queryClient = useQueryClient();
  const flagsKey = ['flags', params.key];
  /** Puts one environment's value of one flag into the cached list; the other rows keep their objects. */
  const setValue = (slug: string, env: string, change: (value: EnvFlag) => EnvFlag) =>
    queryClient.setQueryData<{ flags: FlagEntry[] }>(flagsKey, (data) =>
      data
        ? {
            flags: data.flags.map((f) =>
              f.slug !== slug ? f : { ...f, environments: f.environments.map((e) => (e.environment.key === env ? change(e) : e)) },
            ),
          }
        : data,
    );
  // Optimistic: the switch moves at once; the server's answer replaces it, a refusal puts it back.
  const toggle = useMutation({
    mutationFn: ({ slug, env, enabled }: { slug: string; env: string; enabled: boolean }) =>
      api<EnvFlag>('PATCH', `/projects/${encodeURIComponent(params.key)}/environments/${encodeURIComponent(env)}/flags/${encodeURIComponent(slug)}`, {
        enabled,
      }),
    meta: { invalidates: [['audit'], ['stale-flags', params.key]], error: 'Not switched' },
    onMutate: async ({ slug, env, enabled }) => {
      await queryClient.cancelQueries({ queryKey: flagsKey });
      setValue(slug, env, (e) => ({ ...e, enabled }));
    },
    onError: (_error, { slug, env, enabled }) => setValue(slug, env, (e) => ({ ...e, enabled: !enabled })),
    // The server's answer replaces the optimistic value only when it differs: one render of the list less.
    onSuccess: (answer, { slug, env, enabled }) => {
      if (answer.enabled !== enabled) setValue(slug, env, (e) => ({ ...e, ...answer, environment: e.environment }));
    },
  });
  const remove = useMutation({
    mutationFn: (slug: string) => api('DELETE', `/projects/${encodeURIComponent(params.key)}/flags/${encodeURIComponent(slug)}`),
    meta: { invalidates: [flagsKey, ['audit']], error: false },
    onSuccess: (_answer, slug) => {
      setDeleting(undefined);
      toast.success(`Deleted flag ${slug}`);
    },
  });
  const allTags = useMemo(() => [...new Set((flags.data?.flags ?? []).flatMap((f) => f.tags ?? []))].sort(), [flags.data]);
  const archivedCount = useMemo(() => (flags.data?.flags ?? []).filter((f) => f.archivedAt).length, [flags.data]);
  const visible = useMemo(() => {
    const all = (flags.data?.flags ?? []).filter((f) => Boolean(f.archivedAt) === archived && (!tag || (f.tags ?? []).includes(tag)));
    const needle = deferred.trim().toLowerCase();
    if (!needle) return all;
    return all.filter(
      (f) =>
        f.slug.toLowerCase().includes(needle) ||
        (f.tags ?? []).some((t) => t.includes(needle)) ||
        f.environments.some((e) => e.description.toLowerCase().includes(needle)),
    );
  }, [flags.data, deferred, tag, archived]);

  // Stable callbacks, so that a row whose flag did not change is not rendered again (FlagRow is memo'd):
  // a toggle renders the one row it changed, not 3,000 switches.
  const { mutate } = toggle;
  // A protected environment's switch proposes the change instead (issue 31 item 4).
  const [write, setWrite] = useState<FlagWrite | null>(null);
  // Read through a ref, so that the callback stays the same object (FlagRow is memo'd).
  const environmentsNow = useRef<Environment[]>([]);
  environmentsNow.current = project.data?.environments ?? [];
  const onToggle = useCallback(
    (slug: string, env: string, enabled: boolean) => {
      const target = environmentsNow.current.find((e) => e.key === env);
      if (!target?.protected) mutate({ slug, env, enabled });
      else setWrite({ env: target, slug, values: { enabled }, title: `Switch ${slug} ${enabled ? 'on' : 'off'} in ${target.name}` });
    },
    [mutate],
  );
  const environmentCount = project.data?.environments.length ?? 0;
  const columns = useMemo(() => ({ '--env-columns': environmentCount }) as CSSProperties, [environmentCount]);

  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  const environments = project.data.environments;
  const pending = toggle.isPending ? toggle.variables : undefined;

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
        <Field
          label="Search flags"
          type="search"
          value={search}
          onChange={setSearch}
          hint={
            <>
              By slug or description<KeyHint> · press / to search</KeyHint>
            </>
          }
        />
        {allTags.length > 0 && (
          <Select label="Tag" value={tag} onChange={setTag}>
            <option value="">Any tag</option>
            {allTags.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </Select>
        )}
        {(archivedCount > 0 || archived) && <Switch label={`Archived flags (${archivedCount})`} checked={archived} onChange={setArchived} />}
        <p className="muted" aria-live="polite">
          {flags.data ? `${visible.length} of ${flags.data.flags.length} flags` : ''}
        </p>
      </div>
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
      <ProtectedWriteDialog projectKey={params.key} write={write} onClose={() => setWrite(null)} onWritten={() => setWrite(null)} />
      {flags.isPending && <Loading what="flags" />}
      <ErrorMessage error={flags.error} />
      {flags.data && flags.data.flags.length === 0 && (
        <EmptyState title="No flag yet">Create the first one above: it starts switched off in every environment.</EmptyState>
      )}
      {flags.data && flags.data.flags.length > 0 && visible.length === 0 && <p className="muted">No flag matches “{deferred}”.</p>}
      {visible.length > 0 && (
        <Table className="flags" label="Flags">
          <thead style={columns}>
            <tr>
              <th scope="col">Flag</th>
              {environments.map((e) => (
                <th scope="col" key={e.key}>
                  {e.name}
                  {e.protected && (
                    <small className="protected-mark" title="A change here is proposed for review">
                      {' '}
                      (protected)
                    </small>
                  )}
                </th>
              ))}
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody style={columns}>
            {visible.map((flag) => (
              <FlagRow
                key={flag.slug}
                projectKey={params.key}
                flag={flag}
                environments={environments}
                pendingEnv={pending?.slug === flag.slug ? pending.env : undefined}
                canWrite={canWrite}
                onToggle={onToggle}
                onDelete={setDeleting}
              />
            ))}
          </tbody>
        </Table>
      )}
    </>
  );
}

const FlagRow = memo(function FlagRow({
  projectKey,
  flag,
  environments,
  pendingEnv,
  canWrite,
  onToggle,
  onDelete,
}: {
  projectKey: string;
  flag: FlagEntry;
  environments: Environment[];
  /** The environment whose switch of this flag is being saved, if any. */
  pendingEnv: string | undefined;
  canWrite: boolean;
  onToggle: (slug: string, env: string, enabled: boolean) => void;
  onDelete: (slug: string) => void;
}) {
  const byEnv = new Map(flag.environments.map((e) => [e.environment.key, e]));
  const now = Date.now();
  const expired = flag.environments.some((e) => e.expiredAt && Date.parse(e.expiredAt) < now);
  const preview = flag.environments.some((e) => e.isPreview);
  return (
    <tr>
      <th scope="row">
        <Link href={`/projects/${projectKey}/flags/${encodeURIComponent(flag.slug)}`}>{flag.slug}</Link>
        {expired && <Badge tone="warn">Expired</Badge>}
        {preview && <Badge>Preview</Badge>}
        {flag.archivedAt && <Badge tone="muted">Archived</Badge>}
        {(flag.tags ?? []).map((t) => (
          <Badge key={t} tone="muted">
            {t}
          </Badge>
        ))}
        {flag.environments[0] && flag.environments[0].type !== 'boolean' && <Badge>{flag.environments[0].type}</Badge>}
        <div className="muted small-text">{flag.environments[0]?.description}</div>
      </th>
      {environments.map((env) => {
        const value = byEnv.get(env.key);
        const busy = pendingEnv === env.key;
        const targeted = value !== undefined && isTargeted(value);
        const noteId = `rules-${flag.slug}-${env.key}`;
        return (
          <td key={env.key}>
            {value && (
              <Switch
                checked={value.enabled}
                ariaLabel={`${flag.slug} in ${env.name}`}
                describedBy={targeted ? noteId : undefined}
                disabled={!canWrite}
                onChange={(enabled) => !busy && onToggle(flag.slug, env.key, enabled)}
              />
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
          <button type="button" className="small danger-text" onClick={() => onDelete(flag.slug)}>
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

/** The width below which the dashboard lays out for a phone (the shell's own breakpoint in styles.css). */
const NARROW = '(max-width: 899px)';

function CreateFlag({ projectKey }: { projectKey: string }) {
  const [slug, setSlug] = useState('');
  const [description, setDescription] = useState('');
  const [type, setType] = useState<FlagType>('boolean');
  const [variants, setVariants] = useState<VariantDraft[]>([]);
  const [defaultVariant, setDefaultVariant] = useState('');
  const [local, setLocal] = useState<ReturnType<typeof problemsOf>>([]);
  // A new form after each flag created: its emptied fields are not "touched", so none is marked Required.
  const [round, setRound] = useState(0);
  const create = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      api<{ changeRequests: Array<{ id: string; environment: { name: string } }> }>('POST', `/projects/${encodeURIComponent(projectKey)}/flags`, body),
    meta: { invalidates: [['flags', projectKey], ['change-requests', projectKey], ['audit']], error: false },
    onSuccess: (answer, body) => {
      // In a protected environment the rest of what was asked (the description) waits in a change request.
      const held = answer.changeRequests.map((r) => r.environment.name);
      const review = held.length > 0 ? `; its settings in ${held.join(', ')} wait for review in a change request` : '';
      toast.success(`Created flag ${String(body.slug)}: off in every environment${review}`);
      // The next flag starts from an empty form (issue 31 item 8): boolean, no variants, no field marked.
      setSlug('');
      setDescription('');
      setType('boolean');
      setVariants([]);
      setDefaultVariant('');
      setLocal([]);
      setRound((n) => n + 1);
    },
  });
  /** Variants edited: a renamed default serve follows its variant (issue 31 item 9). */
  const changeVariants = (next: VariantDraft[]) => {
    const renamed = variants.find((v) => v.name.trim() === defaultVariant);
    const after = renamed && next.find((v) => v.id === renamed.id);
    if (after) setDefaultVariant(after.name.trim());
    setVariants(next);
  };
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
    if (rules.slug(slug)) return;
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
  // On a phone the form waits behind a button, so that the list of flags comes first (issue 31 item 14).
  const [open, setOpen] = useState(() => !window.matchMedia(NARROW).matches);
  if (!open)
    return (
      <p>
        <button type="button" className="primary" aria-expanded={false} onClick={() => setOpen(true)}>
          New flag
        </button>
      </p>
    );
  return (
    <Section title="New flag">
      <ProblemsProvider value={[...local, ...problemsOf(create.error)]}>
        <form key={round} onSubmit={submit}>
          <div className="row">
            <Field
              label="Slug"
              path="slug"
              value={slug}
              onChange={setSlug}
              validate={rules.slug}
              required
              hint="Letters, digits, . _ - (created off in every environment)"
            />
            <Field label="Description" path="description" value={description} onChange={setDescription} />
            <Select label="Type" value={type} onChange={(v) => chooseType(v as FlagType)} hint="What OpenFeature's get…Value returns">
              <option value="boolean">boolean (on/off)</option>
              <option value="string">string</option>
              <option value="number">number</option>
              <option value="object">object (JSON)</option>
            </Select>
          </div>
          {type !== 'boolean' && (
            <>
              <VariantsEditor type={type} variants={variants} onChange={changeVariants} owner="the new flag" />
              <Select
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
              </Select>
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
      {create.error && !problemsOf(create.error).length ? <ErrorMessage error={create.error} /> : null}
    </Section>
  );
}
