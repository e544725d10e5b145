import { useInfiniteQuery, useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'wouter';
import { api, type CodeRef, type CodeRefRemoval, type EnvFlag, type FeedbackPage, type FlagEntry, type Segment, type StaleReport } from '../api.ts';
import { PreviewEditor } from '../PreviewEditor.tsx';
import { Badge, Breadcrumbs, Checkbox, EmptyState, ErrorMessage, Field, formatDate, Loading, plural, Section, Tabs, TextArea } from '../ui/index.ts';
import { TargetingEditor } from '../targeting/TargetingEditor.tsx';
import { V1Note } from '../targeting/v1-note.tsx';
import { useProject } from './Projects.tsx';
import { RULE_TEXT } from './StaleFlags.tsx';
import { FlagUsageSection } from './FlagUsage.tsx';
import { History } from './History.tsx';
import { FlagSettings } from './FlagSettings.tsx';
import { useCanWrite } from '../session.ts';
import { type FlagWrite, ProtectedNote, ProtectedWriteDialog, useIsProtected } from './ProtectedWrite.tsx';
import { FlagReleases, RolledBackNotice } from './Releases.tsx';

/** One flag: its values per environment, preview settings, feedback and code references. */
export default function FlagScreen({ projectKey, slug }: { projectKey: string; slug: string }) {
  const project = useProject(projectKey);
  const flags = useQuery({
    queryKey: ['flags', projectKey],
    queryFn: () => api<{ flags: FlagEntry[] }>('GET', `/projects/${encodeURIComponent(projectKey)}/flags`),
    // Writes invalidate only what they change, so a flag made elsewhere (the API, another tab) may be missing
    // from the cached list: it is fetched again on opening the flag, and "does not exist" waits for it.
    refetchOnMount: 'always',
  });
  if (project.isPending || flags.isPending) return <Loading what="the flag" />;
  if (project.error || flags.error) return <ErrorMessage error={project.error ?? flags.error} />;
  const flag = flags.data.flags.find((f) => f.slug === slug);
  if (!flag && flags.isFetching) return <Loading what="the flag" />;
  return (
    <>
      <Breadcrumbs items={[{ label: 'Projects', href: '/projects' }, { label: project.data.name, href: `/projects/${projectKey}` }, { label: slug }]} />
      <h1>
        {slug}
        {flag && <Badge>{flag.environments[0]?.type ?? 'boolean'} flag</Badge>}
        {flag?.archivedAt && <Badge tone="muted">Archived</Badge>}
        {(flag?.tags ?? []).map((t) => (
          <Badge key={t} tone="muted">
            {t}
          </Badge>
        ))}
      </h1>
      {!flag && (
        <div role="alert" className="error">
          <p>
            Flag with slug {slug} does not exist in project {project.data.name}.
          </p>
        </div>
      )}
      {flag && (
        <>
          <RolledBackNotice projectKey={projectKey} flag={flag} />
          <FlagDescription key={flag.environments.map((e) => e.description).join('\n')} projectKey={projectKey} flag={flag} />
          <SectionNav />
          <div className="grid" id="switches">
            {flag.environments.map((value) => (
              <EnvironmentForm key={`${value.environment.key}:${basicsVersion(value)}`} projectKey={projectKey} value={value} />
            ))}
          </div>
          <div id="releases" className="anchor">
            <FlagReleases projectKey={projectKey} flag={flag} environments={project.data.environments} />
          </div>
          <div id="targeting" className="anchor">
            <Targeting projectKey={projectKey} flag={flag} flags={flags.data.flags} />
          </div>
          <div id="preview" className="anchor">
            <PreviewSettings key={flag.environments.map((e) => e.updatedAt).join()} projectKey={projectKey} flag={flag} />
          </div>
          <div id="feedback" className="anchor">
            <Section title="Feedback">
              {flag.environments.map((value) => (
                <FeedbackOf key={value.environment.key} projectKey={projectKey} value={value} />
              ))}
            </Section>
          </div>
          <div id="usage" className="anchor">
            <FlagUsageSection projectKey={projectKey} slug={slug} />
          </div>
          <div id="settings" className="anchor">
            <FlagSettings key={`${flag.slug}:${(flag.tags ?? []).join()}`} projectKey={projectKey} flag={flag} />
          </div>
          <div id="code-references" className="anchor">
            <CodeReferences projectKey={projectKey} slug={slug} />
          </div>
          <div id="clean-up" className="anchor">
            <Hygiene projectKey={projectKey} slug={slug} />
          </div>
          <div id="history" className="anchor">
            <Section title="History">
              <History
                query={`project=${encodeURIComponent(projectKey)}&entity=flag&entityId=${encodeURIComponent(slug)}`}
                names={{ environments: new Map(project.data.environments.map((e) => [e.key, e.name])) }}
                label={`History of ${slug}`}
                revertIn={projectKey}
              />
            </Section>
          </div>
        </>
      )}
    </>
  );
}

/** The flag's page is long (switches, releases, targeting, preview, feedback, usage, settings, code references,
 * clean-up, history): a row of links to its sections, which stays at hand while scrolling (issue 31 item 14). */
const SECTIONS = [
  ['switches', 'Switches'],
  ['releases', 'Releases'],
  ['targeting', 'Targeting'],
  ['preview', 'Preview'],
  ['feedback', 'Feedback'],
  ['usage', 'Usage'],
  ['settings', 'Settings'],
  ['code-references', 'Code references'],
  ['clean-up', 'Clean-up'],
  ['history', 'History'],
] as const;

function SectionNav() {
  return (
    <nav aria-label="Sections of the flag" className="tabs section-nav">
      {SECTIONS.map(([id, title]) => (
        <a key={id} href={`#${id}`}>
          {title}
        </a>
      ))}
    </nav>
  );
}

/** The fields of the environment's card: it starts again from the server's values when they change. */
const basicsVersion = (v: EnvFlag) => JSON.stringify([v.enabled, v.state, v.payload, v.expiredAt]);

/** Variants, rules and prerequisites of the flag, one environment at a time. */
function Targeting({ projectKey, flag, flags }: { projectKey: string; flag: FlagEntry; flags: FlagEntry[] }) {
  const [envKey, setEnvKey] = useState(flag.environments[0]?.environment.key ?? '');
  const segments = useQuery({
    queryKey: ['segments', projectKey],
    queryFn: () => api<{ segments: Segment[] }>('GET', `/projects/${encodeURIComponent(projectKey)}/segments`),
  });
  const value = flag.environments.find((e) => e.environment.key === envKey) ?? flag.environments[0];
  return (
    <Section title="Targeting">
      <p className="muted">
        Who gets which variant through OpenFeature (OFREP): rules on the user's attributes and segments, percentage splits, prerequisites. Try it in the{' '}
        <Link href={`/projects/${projectKey}/playground`}>playground</Link>.
      </p>
      <Tabs
        label="Environment"
        tabs={flag.environments.map((e) => ({ key: e.environment.key, title: e.environment.name }))}
        selected={value?.environment.key ?? ''}
        onSelect={setEnvKey}
      >
        {segments.isPending && <Loading what="segments" />}
        <ErrorMessage error={segments.error} />
        {value && segments.data && (
          <TargetingEditor key={value.environment.key} projectKey={projectKey} value={value} flags={flags} segments={segments.data.segments} />
        )}
      </Tabs>
    </Section>
  );
}

const toLocalInput = (iso: string | null) =>
  iso ? new Date(new Date(iso).getTime() - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16) : '';

function EnvironmentForm({ projectKey, value }: { projectKey: string; value: EnvFlag }) {
  const canWrite = useCanWrite();
  const env = value.environment;
  const [enabled, setEnabled] = useState(value.enabled);
  const [payload, setPayload] = useState(value.payload === null ? '' : JSON.stringify(value.payload, null, 2));
  const [expiry, setExpiry] = useState(toLocalInput(value.expiredAt));
  const [problem, setProblem] = useState<string | undefined>();
  const guarded = useIsProtected(projectKey)(env.key);
  const [write, setWrite] = useState<FlagWrite | null>(null);
  const save = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      api('PATCH', `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(env.key)}/flags/${encodeURIComponent(value.slug)}`, body),
    meta: { success: `Saved ${env.name}`, error: `Not saved in ${env.name}`, invalidates: [['flags', projectKey], ['audit'], ['stale-flags', projectKey]] },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    let parsed: unknown = null;
    if (payload.trim() !== '') {
      try {
        parsed = JSON.parse(payload);
      } catch {
        setProblem('Payload is not valid JSON');
        return;
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        setProblem('Payload is not valid JSON: it must be an object such as {"variant": "b"}, or empty');
        return;
      }
    }
    setProblem(undefined);
    const body = { enabled, payload: parsed, expiredAt: expiry ? new Date(expiry).toISOString() : null };
    if (guarded) setWrite({ env, slug: value.slug, values: body, title: `Change ${value.slug} in ${env.name}` });
    else save.mutate(body);
  };
  return (
    <section className="card" aria-labelledby={`env-${env.key}`}>
      <h2 id={`env-${env.key}`}>{env.name}</h2>
      <form onSubmit={submit}>
        <Checkbox label={`Enabled in ${env.name}`} checked={enabled} onChange={setEnabled} />
        {value.type !== 'boolean' && (
          <p className="muted small-text">
            Off: the flag is disabled in flagd's sense and serves no value (OpenFeature callers get their own default). On: it serves its default serve and
            rules.
          </p>
        )}
        <V1Note value={value} />
        <TextArea label={`Payload in ${env.name}`} value={payload} onChange={setPayload} rows={4} hint="A JSON object, or empty for none" />
        <Field label={`Expiry in ${env.name}`} type="datetime-local" value={expiry} onChange={setExpiry} />
        {problem && (
          <div role="alert" className="error">
            <p>{problem}</p>
          </div>
        )}
        {guarded && <ProtectedNote envName={env.name} />}
        <button type="submit" className="primary" disabled={save.isPending || !canWrite}>
          {save.isPending ? 'Saving…' : `Save ${env.name}${guarded ? ' for review' : ''}`}
        </button>
      </form>
      <ProtectedWriteDialog projectKey={projectKey} write={write} onClose={() => setWrite(null)} />
    </section>
  );
}

/** One description for the flag: saved in every environment (the API keeps one per environment). */
function FlagDescription({ projectKey, flag }: { projectKey: string; flag: FlagEntry }) {
  const canWrite = useCanWrite();
  const texts = [...new Set(flag.environments.map((e) => e.description))];
  const [description, setDescription] = useState(flag.environments.find((e) => e.description !== '')?.description ?? '');
  const save = useMutation({
    mutationFn: async () => {
      for (const value of flag.environments) {
        if (value.description === description) continue;
        await api(
          'PATCH',
          `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(value.environment.key)}/flags/${encodeURIComponent(flag.slug)}`,
          { description },
        );
      }
    },
    meta: { success: 'Saved the description', error: 'Description not saved', invalidates: [['flags', projectKey], ['audit']] },
  });
  return (
    <form
      className="description-form"
      onSubmit={(event: FormEvent) => {
        event.preventDefault();
        save.mutate();
      }}
    >
      <TextArea label="Description" path="description" value={description} onChange={setDescription} rows={2} disabled={!canWrite} />
      {texts.length > 1 && <p className="muted small-text">The environments had different descriptions; saving sets this one in each.</p>}
      <button type="submit" disabled={save.isPending || !canWrite}>
        {save.isPending ? 'Saving…' : 'Save description'}
      </button>
    </form>
  );
}

/** Preview settings apply to every environment of the flag at once (one PATCH per environment). */
function PreviewSettings({ projectKey, flag }: { projectKey: string; flag: FlagEntry }) {
  const first = flag.environments[0]!;
  const [isPreview, setIsPreview] = useState(first.isPreview);
  const [name, setName] = useState(first.previewName ?? '');
  const [content, setContent] = useState<unknown>(first.previewContent);
  const save = useMutation({
    mutationFn: async () => {
      for (const value of flag.environments) {
        await api(
          'PATCH',
          `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(value.environment.key)}/flags/${encodeURIComponent(flag.slug)}`,
          { isPreview, previewName: name.trim() === '' ? null : name, previewContent: content ?? null },
        );
      }
    },
    meta: { success: 'Saved the preview in every environment', error: 'Preview not saved', invalidates: [['flags', projectKey], ['audit']] },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <Section title="Preview">
      <p className="muted">
        A preview flag is listed by GET /v1/flags/preview with its content, for users to try and rate. These settings apply to every environment.
      </p>
      <form onSubmit={submit}>
        <Checkbox label="Preview flag" checked={isPreview} onChange={setIsPreview} />
        <Field label="Preview name" value={name} onChange={setName} />
        <PreviewEditor initial={first.previewContent} onChange={setContent} />
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save preview'}
        </button>
      </form>
    </Section>
  );
}

function FeedbackOf({ projectKey, value }: { projectKey: string; value: EnvFlag }) {
  const env = value.environment;
  const pages = useInfiniteQuery({
    queryKey: ['feedback', projectKey, env.key, value.slug],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      api<FeedbackPage>(
        'GET',
        `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(env.key)}/flags/${encodeURIComponent(value.slug)}/feedback?limit=20${pageParam ? `&cursor=${encodeURIComponent(pageParam)}` : ''}`,
      ),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const summary = pages.data?.pages[0]?.summary;
  const entries = pages.data?.pages.flatMap((p) => p.feedback) ?? [];
  return (
    <div className="feedback">
      <h3>{env.name}</h3>
      {pages.isPending && <Loading what="feedback" />}
      <ErrorMessage error={pages.error} />
      {summary && summary.total === 0 && <p className="muted">No feedback yet.</p>}
      {summary && summary.total > 0 && (
        <>
          <p>
            {plural(summary.total, 'response')}, average rating {summary.averageRating ?? '-'} of 5.{' '}
            {Object.entries(summary.moods)
              .filter(([, n]) => n > 0)
              .map(([mood, n]) => `${mood.toLowerCase().replace('_', ' ')}: ${n}`)
              .join(', ')}
          </p>
          <ul className="plain">
            {entries.map((f) => (
              <li key={f.id}>
                <strong>{f.rating}/5</strong> {f.mood.toLowerCase().replace('_', ' ')} {f.description && <q>{f.description}</q>}{' '}
                <span className="muted">{formatDate(f.createdAt)}</span>
              </li>
            ))}
          </ul>
          {pages.hasNextPage && (
            <button type="button" onClick={() => pages.fetchNextPage()} disabled={pages.isFetchingNextPage}>
              {pages.isFetchingNextPage ? 'Loading…' : `Load more feedback in ${env.name}`}
            </button>
          )}
        </>
      )}
    </div>
  );
}

/** A link to the line in the repository's web view, for the hosts whose URL scheme is known. */
function lineUrl(ref: CodeRef): string | undefined {
  if (!ref.repositoryUrl || !/^https:\/\//.test(ref.repositoryUrl)) return undefined;
  const repo = ref.repositoryUrl.replace(/\.git$/, '').replace(/\/+$/, '');
  const file = ref.filePath.split('/').map(encodeURIComponent).join('/');
  const branch = encodeURIComponent(ref.branch);
  if (/^https:\/\/(www\.)?gitlab\./.test(repo)) return `${repo}/-/blob/${branch}/${file}#L${ref.lineNumber}`;
  if (/^https:\/\/bitbucket\.org\//.test(repo)) return `${repo}/src/${branch}/${file}#lines-${ref.lineNumber}`;
  return `${repo}/blob/${branch}/${file}#L${ref.lineNumber}`;
}

function CodeReferences({ projectKey, slug }: { projectKey: string; slug: string }) {
  const refs = useQuery({
    queryKey: ['code-refs', projectKey, slug],
    queryFn: () => api<{ references: CodeRef[] }>('GET', `/projects/${encodeURIComponent(projectKey)}/code-refs?slug=${encodeURIComponent(slug)}`),
  });
  const groups = new Map<string, CodeRef[]>();
  for (const ref of refs.data?.references ?? []) {
    const key = `${ref.projectName} · ${ref.branch}`;
    groups.set(key, [...(groups.get(key) ?? []), ref]);
  }
  return (
    <Section title="Code references">
      {refs.isPending && <Loading what="code references" />}
      <ErrorMessage error={refs.error} />
      {refs.data && groups.size === 0 && (
        <EmptyState title="No code reference yet">The code scanner uploads where your code uses this flag; its lines show here.</EmptyState>
      )}
      {[...groups].map(([group, list]) => (
        <div key={group}>
          <h3>{group}</h3>
          <ul className="plain">
            {list.map((ref) => {
              const url = lineUrl(ref);
              const where = `${ref.filePath}:${ref.lineNumber}`;
              return (
                <li key={where}>
                  {url ? (
                    <a href={url} rel="noreferrer noopener" target="_blank">
                      {where}
                    </a>
                  ) : (
                    where
                  )}{' '}
                  <code>{ref.lineContent}</code>
                </li>
              );
            })}
          </ul>
        </div>
      ))}
    </Section>
  );
}

/** Whether the flag is stale (the project report's entry for it) and where it left the code. */
function Hygiene({ projectKey, slug }: { projectKey: string; slug: string }) {
  const report = useQuery({
    queryKey: ['stale-flags', projectKey, '30'],
    queryFn: () => api<StaleReport>('GET', `/projects/${encodeURIComponent(projectKey)}/stale-flags?days=30`),
  });
  const removals = useQuery({
    queryKey: ['code-ref-removals', projectKey, slug],
    queryFn: () =>
      api<{ removals: CodeRefRemoval[] }>('GET', `/projects/${encodeURIComponent(projectKey)}/code-refs/removals?slug=${encodeURIComponent(slug)}`),
  });
  const entry = report.data?.flags.find((f) => f.slug === slug);
  return (
    <Section title="Clean-up">
      {(report.isPending || removals.isPending) && <Loading what="the clean-up status" />}
      <ErrorMessage error={report.error ?? removals.error} />
      {report.data && !entry && <p>Not stale: in use and changed in the last 30 days.</p>}
      {entry && (
        <>
          <p>Stale: {entry.rules.map((rule) => RULE_TEXT[rule] + (rule === 'unchanged' ? ' for 30 days' : '')).join('; ')}.</p>
          {entry.removedFromCodeAt && <p>Removed from code on {formatDate(entry.removedFromCodeAt)}: it can probably be deleted.</p>}
        </>
      )}
      {removals.data && removals.data.removals.length > 0 && (
        <>
          <h3>Removed from code</h3>
          <ul className="plain">
            {removals.data.removals.map((r) => (
              <li key={`${r.projectName}\n${r.branch}`}>
                {r.projectName} · {r.branch}: {plural(r.referenceCount, 'reference')} gone on {formatDate(r.removedAt)}
                {r.lastReferences[0] && (
                  <>
                    {' '}
                    (last seen at {r.lastReferences[0].filePath}:{r.lastReferences[0].lineNumber})
                  </>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
    </Section>
  );
}
