import { useMutation, useQueries, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { type Answer, api, type Environment, type FlagEntry } from '../api.ts';
import { useCanWrite } from '../session.ts';
import {
  Badge,
  Button,
  ConfirmDialog,
  DateText,
  Dialog,
  EmptyState,
  ErrorMessage,
  Field,
  Loading,
  plural,
  problemsOf,
  ProblemsProvider,
  rules,
  Section,
  Select,
  Table,
  toast,
} from '../ui/index.ts';

// Issue 33 in the dashboard: a flag's releases (a timeline of the active one per environment, its
// guardrails with their numbers, a chart of the two arms, the people's moves with confirmations; why a
// release rolled back, at the top of the flag's page), and the project's release templates.

type ReleasePath = '/admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/releases/{releaseId}';
export type Release = Answer<ReleasePath, 'get'>;
type Readings = Answer<`${ReleasePath}/readings`, 'get'>;
type Template = Answer<'/admin/v1/projects/{projectKey}/release-templates/{templateKey}', 'get'>;
type Guardrail = Release['guardrails'][number];

const ACTIVE = ['running', 'waiting_approval', 'paused'];
const STATUS: Record<Release['status'], { label: string; tone?: 'warn' | 'ok' | 'danger' | 'muted' }> = {
  running: { label: 'Running', tone: 'ok' },
  waiting_approval: { label: 'Waiting for approval', tone: 'warn' },
  paused: { label: 'Paused', tone: 'warn' },
  completed: { label: 'Completed', tone: 'muted' },
  rolled_back: { label: 'Rolled back', tone: 'danger' },
  cancelled: { label: 'Cancelled', tone: 'muted' },
};
const STATE_TONE: Record<string, 'ok' | 'muted' | 'danger' | 'warn'> = { healthy: 'ok', collecting: 'muted', breached: 'danger', unknown: 'warn' };

const base = (projectKey: string, envKey: string, slug: string) =>
  `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(envKey)}/flags/${encodeURIComponent(slug)}/releases`;

/** "1 h 30 min", "45 s": a hold in words. */
export function duration(seconds: number): string {
  if (seconds === 0) return 'no hold';
  const parts: string[] = [];
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (d) parts.push(`${d} d`);
  if (h) parts.push(`${h} h`);
  if (m) parts.push(`${m} min`);
  if (s) parts.push(`${s} s`);
  return parts.join(' ');
}

const pct = (v: number | null | undefined, signed = false) =>
  v === null || v === undefined ? '–' : `${signed && v >= 0 ? '+' : ''}${(v * 100).toFixed(Math.abs(v) < 0.1 ? 1 : 0)} %`;

/** The releases of a flag in each of its environments, newest first. */
function useFlagReleases(projectKey: string, flag: FlagEntry) {
  return useQueries({
    queries: flag.environments.map((e) => ({
      queryKey: ['releases', projectKey, e.environment.key, flag.slug],
      queryFn: () => api<{ releases: Release[] }>('GET', base(projectKey, e.environment.key, flag.slug)),
      refetchInterval: 15_000,
    })),
  });
}

/** At the top of the flag's page: each environment whose latest release rolled back, and why. */
export function RolledBackNotice({ projectKey, flag }: { projectKey: string; flag: FlagEntry }) {
  const results = useFlagReleases(projectKey, flag);
  const notices = flag.environments.flatMap((e, i) => {
    const latest = results[i]?.data?.releases[0];
    return latest?.status === 'rolled_back' ? [{ environment: e.environment.name, release: latest }] : [];
  });
  if (notices.length === 0) return null;
  return (
    <>
      {notices.map(({ environment, release }) => (
        <div key={release.id} role="alert" className="error rolled-back">
          <p>
            <strong>
              The release of {release.variant} in {environment} was rolled back
            </strong>{' '}
            (<DateText iso={release.updatedAt} />
            ): everyone is served {release.baseline} again. Why: {release.rolledBackReason ?? 'a guardrail was breached'}.
          </p>
        </div>
      ))}
    </>
  );
}

/** The flag's releases: the active one of each environment as a timeline, and the past ones. */
export function FlagReleases({
  projectKey,
  flag,
  environments,
}: {
  projectKey: string;
  flag: FlagEntry;
  environments: Array<Environment & { protected?: boolean }>;
}) {
  const canWrite = useCanWrite();
  const results = useFlagReleases(projectKey, flag);
  if (results.some((r) => r.isPending)) return <Loading what="releases" />;
  const error = results.find((r) => r.error)?.error;
  const perEnvironment = flag.environments.map((e, i) => ({ environment: e.environment, releases: results[i]?.data?.releases ?? [] }));
  const any = perEnvironment.some((p) => p.releases.length > 0);
  return (
    <Section title="Releases" id="releases">
      <ErrorMessage error={error} />
      {!any && (
        <EmptyState title="No release of this flag yet">
          <p>A release serves a new variant to a growing share of users, step by step, and goes back by itself when a guardrail says it hurts (docs/api.md).</p>
        </EmptyState>
      )}
      {perEnvironment.map(({ environment, releases }) => {
        const active = releases.find((r) => ACTIVE.includes(r.status));
        const past = releases.filter((r) => r !== active);
        const value = flag.environments.find((e) => e.environment.key === environment.key);
        const isProtected = environments.find((e) => e.key === environment.key)?.protected === true;
        if (releases.length === 0 && !canWrite) return null;
        return (
          <div key={environment.key} className="release-environment">
            <h3>{environment.name}</h3>
            {active && <ReleaseTimeline projectKey={projectKey} envKey={environment.key} slug={flag.slug} release={active} />}
            {!active && canWrite && value && (
              <StartRelease
                projectKey={projectKey}
                environment={{ ...environment, protected: isProtected }}
                slug={flag.slug}
                variants={Object.keys(value.variants ?? {})}
              />
            )}
            {past.length > 0 && (
              <Table label={`Past releases in ${environment.name}`}>
                <thead>
                  <tr>
                    <th scope="col">Release</th>
                    <th scope="col">Status</th>
                    <th scope="col">Started</th>
                  </tr>
                </thead>
                <tbody>
                  {past.map((r) => (
                    <tr key={r.id}>
                      <td>
                        {r.baseline} → {r.variant}
                        {r.rolledBackReason && <div className="muted small-text">{r.rolledBackReason}</div>}
                      </td>
                      <td>
                        <Badge tone={STATUS[r.status].tone}>{STATUS[r.status].label}</Badge>
                      </td>
                      <td>
                        <DateText iso={r.createdAt} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            )}
          </div>
        );
      })}
    </Section>
  );
}

/** What the current step waits for, in words. */
function waitingText(release: Release): string | undefined {
  const step = release.steps[release.currentStep];
  switch (release.waitingFor) {
    case 'time':
      return step?.holdEndsAt ? `Waits for its hold to end, at ${new Date(step.holdEndsAt).toLocaleString()}` : 'Waits for its hold to end';
    case 'approval':
      return 'Waits for someone to approve this step';
    case 'users':
      return 'Waits for its guardrails to see enough users';
    case 'guardrail':
      return 'Held: a guardrail cannot be read';
    default:
      return release.status === 'paused' ? 'Paused: nothing moves, and the hold does not count' : undefined;
  }
}

type Action = 'approve' | 'pause' | 'resume' | 'rollback' | 'cancel';
const ACTIONS: Record<Action, { label: string; title: string; text: (r: Release) => string; danger?: boolean }> = {
  approve: { label: 'Approve step', title: 'Approve the next step?', text: (r) => `${r.steps[r.currentStep]?.percent ?? 0} % of users will get ${r.variant}.` },
  pause: { label: 'Pause', title: 'Pause the release?', text: () => 'The split stays as it is; no step moves and the hold stops counting until you resume.' },
  resume: { label: 'Resume', title: 'Resume the release?', text: () => 'The guard moves it again; the hold counts on from where it stopped.' },
  rollback: {
    label: 'Roll back',
    title: 'Roll the release back?',
    text: (r) => `Everyone is served ${r.baseline} at once, and the release ends as rolled back.`,
    danger: true,
  },
  cancel: {
    label: 'Cancel release',
    title: 'Cancel the release?',
    text: (r) => `Everyone is served ${r.baseline} at once, and the release ends.`,
    danger: true,
  },
};

function actionsOf(r: Release): Action[] {
  switch (r.status) {
    case 'running':
      return ['pause', 'rollback', 'cancel'];
    case 'waiting_approval':
      return ['approve', 'pause', 'rollback', 'cancel'];
    case 'paused':
      return ['resume', 'rollback', 'cancel'];
    default:
      return [];
  }
}

/** An active release: its steps on a timeline, the current one and what it waits for, its guardrails and the moves. */
function ReleaseTimeline({ projectKey, envKey, slug, release }: { projectKey: string; envKey: string; slug: string; release: Release }) {
  const canWrite = useCanWrite();
  const [asking, setAsking] = useState<Action | undefined>();
  const act = useMutation({
    mutationFn: (action: Action) => api<Release>('POST', `${base(projectKey, envKey, slug)}/${release.id}/${action}`),
    meta: { success: 'Done', error: false, invalidates: [['releases', projectKey, envKey, slug], ['flags', projectKey], ['audit']] },
    onSuccess: () => setAsking(undefined),
  });
  const waiting = waitingText(release);
  return (
    <article className="release" aria-label={`Release of ${release.variant} in this environment`}>
      <p>
        <Badge tone={STATUS[release.status].tone}>{STATUS[release.status].label}</Badge> Serving <strong>{release.variant}</strong> to{' '}
        <strong>{release.percent} %</strong>, {release.baseline} to the rest. Started by {release.createdBy}, <DateText iso={release.createdAt} />
        {release.template ? ` from template ${release.template}` : ''}.
      </p>
      <ol className="release-steps" aria-label="Steps">
        {release.steps.map((s, i) => {
          const current = i === release.currentStep;
          const done = s.completedAt !== null;
          return (
            <li key={i} className={current ? 'current' : done ? 'done' : 'todo'} aria-current={current ? 'step' : undefined}>
              <span className="step-percent">{s.percent} %</span>{' '}
              <span className="muted">
                {duration(s.holdSeconds ?? 0)}
                {s.approval ? ', after an approval' : ''}
              </span>
              <div className="small-text">
                {s.startedAt && (
                  <>
                    Started <DateText iso={s.startedAt} />
                    {s.approvedBy ? ` (approved by ${s.approvedBy})` : ''}
                  </>
                )}
                {s.completedAt && (
                  <>
                    {' '}
                    · ended <DateText iso={s.completedAt} />
                  </>
                )}
                {current && waiting && <div className="waiting">{waiting}</div>}
              </div>
            </li>
          );
        })}
      </ol>
      {release.guardrails.length > 0 && <Guardrails release={release} />}
      {release.guardrails.some((g) => g.metric) && <ArmsChart projectKey={projectKey} envKey={envKey} slug={slug} release={release} />}
      {canWrite && (
        <div className="actions">
          {actionsOf(release).map((a) => (
            <Button key={a} variant={ACTIONS[a].danger ? 'danger' : a === 'approve' ? 'primary' : 'secondary'} onClick={() => setAsking(a)}>
              {ACTIONS[a].label}…
            </Button>
          ))}
        </div>
      )}
      {asking && (
        <ConfirmDialog
          open
          title={ACTIONS[asking].title}
          confirmLabel={ACTIONS[asking].label}
          pendingLabel="Working…"
          onConfirm={() => act.mutate(asking)}
          onCancel={() => {
            act.reset();
            setAsking(undefined);
          }}
          pending={act.isPending}
          error={act.error}
        >
          <p>{ACTIONS[asking].text(release)}</p>
        </ConfirmDialog>
      )}
    </article>
  );
}

const guardrailName = (g: Guardrail) => g.metric ?? g.prometheus?.query ?? 'guardrail';

/** Each guardrail's health with its numbers. */
function Guardrails({ release }: { release: Release }) {
  return (
    <Table label="Guardrails">
      <thead>
        <tr>
          <th scope="col">Guardrail</th>
          <th scope="col">Health</th>
          <th scope="col">Numbers</th>
        </tr>
      </thead>
      <tbody>
        {release.guardrails.map((g, i) => (
          <tr key={i}>
            <td>
              {guardrailName(g)}
              {g.prometheus && (
                <div className="muted small-text">
                  {g.prometheus.above !== undefined ? `above ${g.prometheus.above}` : `below ${g.prometheus.below}`}
                  {g.prometheus.forSeconds ? ` for ${duration(g.prometheus.forSeconds)}` : ''}
                </div>
              )}
            </td>
            <td>
              <Badge tone={STATE_TONE[g.state]}>{g.state}</Badge>
              {g.reason && <div className="muted small-text">{g.reason}</div>}
            </td>
            <td className="small-text">
              {g.users && (
                <div>
                  Users: {[release.variant, release.baseline].map((v) => `${v} ${(g.users?.[v] ?? 0).toLocaleString()}`).join(' · ')}
                  {g.minUsers ? ` (each needs ${g.minUsers.toLocaleString()})` : ''}
                </div>
              )}
              {g.means && <div>Means: {[release.variant, release.baseline].map((v) => `${v} ${pct(g.means?.[v])}`).join(' · ')}</div>}
              {g.lift !== undefined && g.lift !== null && (
                <div>
                  Lift {pct(g.lift, true)}
                  {g.sequentialCi95 ? ` (${pct(g.sequentialCi95[0], true)} to ${pct(g.sequentialCi95[1], true)}, sequential 95 %)` : ''}
                </div>
              )}
              {g.value !== undefined && g.value !== null && <div>Value {g.value}</div>}
            </td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

/** The first metric guardrail's two arms over time: each arm's mean at every check. */
function ArmsChart({ projectKey, envKey, slug, release }: { projectKey: string; envKey: string; slug: string; release: Release }) {
  const index = release.guardrails.findIndex((g) => g.metric);
  const readings = useQuery({
    queryKey: ['releases', projectKey, envKey, slug, release.id, 'readings'],
    queryFn: () => api<Readings>('GET', `${base(projectKey, envKey, slug)}/${release.id}/readings`),
  });
  if (readings.isPending) return <Loading what="the readings" />;
  if (readings.error) return <ErrorMessage error={readings.error} />;
  const points = readings.data.readings.filter((r) => r.guardrail === index && r.reading.means);
  const name = release.guardrails[index]!.metric!;
  if (points.length === 0) return <p className="muted">No reading of {name} with both arms yet: the chart of the two arms appears after the first checks.</p>;
  const arms = [release.variant, release.baseline];
  const max = Math.max(1e-9, ...points.flatMap((p) => arms.map((a) => p.reading.means?.[a] ?? 0)));
  const width = 300;
  const height = 100;
  const x = (i: number) => (points.length === 1 ? width / 2 : (i / (points.length - 1)) * width);
  const y = (v: number) => height - (v / max) * height;
  return (
    <figure className="users-chart">
      <svg viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" role="img" aria-label={`${name} of ${arms.join(' and ')} at each check`}>
        {arms.map((a, i) => (
          <polyline key={a} className={`series s${i}`} fill="none" points={points.map((p, j) => `${x(j)},${y(p.reading.means?.[a] ?? 0)}`).join(' ')} />
        ))}
      </svg>
      <figcaption>
        {arms.map((a, i) => (
          <span key={a} className={`legend s${i}`}>
            {a}
          </span>
        ))}{' '}
        <small className="muted">
          {name} at {plural(points.length, 'check')}, up to {pct(max)}
        </small>
      </figcaption>
    </figure>
  );
}

/** "5 3600", "25 7200 approval", "100": one step a line (percent, hold in seconds, approval). */
function parseSteps(text: string): Array<{ percent: number; holdSeconds?: number; approval?: boolean }> {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line) => {
      const [percent, hold, approval] = line.split(/[\s,]+/);
      return {
        percent: Number(percent?.replace('%', '')),
        ...(hold && hold !== 'approval' ? { holdSeconds: Number(hold) } : {}),
        ...(approval === 'approval' || hold === 'approval' ? { approval: true } : {}),
      };
    });
}

/** "error-rate 500": one metric guardrail a line (metric key, users each arm needs). */
function parseGuardrails(text: string): Array<{ metric: string; minUsers?: number }> {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line) => {
      const [metric, minUsers] = line.split(/[\s,]+/);
      return { metric: metric!, ...(minUsers ? { minUsers: Number(minUsers) } : {}) };
    });
}

/** The project's release templates (its settings): listed, created, deleted. */
export function ReleaseTemplates({ projectKey }: { projectKey: string }) {
  const canWrite = useCanWrite();
  const url = `/projects/${encodeURIComponent(projectKey)}/release-templates`;
  const templates = useQuery({ queryKey: ['release-templates', projectKey], queryFn: () => api<{ templates: Template[] }>('GET', url) });
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const [steps, setSteps] = useState('5 3600\n25 7200 approval\n100');
  const [guardrails, setGuardrails] = useState('');
  const [deleting, setDeleting] = useState<Template | undefined>();
  const create = useMutation({
    mutationFn: () => api<Template>('POST', url, { key: key.trim(), name: name.trim(), steps: parseSteps(steps), guardrails: parseGuardrails(guardrails) }),
    meta: { success: 'Created the release template', error: false, invalidates: [['release-templates', projectKey], ['audit']] },
    onSuccess: () => {
      setKey('');
      setName('');
    },
  });
  const remove = useMutation({
    mutationFn: (t: Template) => api('DELETE', `${url}/${encodeURIComponent(t.key)}`),
    meta: { success: 'Deleted the release template', error: false, invalidates: [['release-templates', projectKey], ['audit']] },
    onSuccess: () => setDeleting(undefined),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!rules.required(key) && !rules.required(name)) create.mutate();
  };
  return (
    <Section title="Release templates">
      <p className="muted">Plans to reuse: a release names one and may override its steps or guardrails.</p>
      {templates.isPending && <Loading what="release templates" />}
      <ErrorMessage error={templates.error} />
      {templates.data && templates.data.templates.length === 0 && <EmptyState title="No release template yet" />}
      {templates.data && templates.data.templates.length > 0 && (
        <Table label="Release templates">
          <thead>
            <tr>
              <th scope="col">Template</th>
              <th scope="col">Steps</th>
              <th scope="col">Guardrails</th>
              {canWrite && (
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {templates.data.templates.map((t) => (
              <tr key={t.key}>
                <td>
                  {t.name} <code>{t.key}</code>
                </td>
                <td className="small-text">
                  {t.steps
                    .map((s) => `${s.percent} %${s.holdSeconds ? ` for ${duration(s.holdSeconds)}` : ''}${s.approval ? ' after approval' : ''}`)
                    .join(', then ')}
                </td>
                <td className="small-text">
                  {t.guardrails.length === 0 ? 'none' : t.guardrails.map((g) => ('metric' in g ? g.metric : g.prometheus.query)).join(', ')}
                </td>
                {canWrite && (
                  <td>
                    <Button size="small" variant="danger-text" onClick={() => setDeleting(t)}>
                      Delete <span className="sr-only">template {t.name}</span>
                    </Button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {canWrite && (
        <ProblemsProvider value={problemsOf(create.error)}>
          <form onSubmit={submit} aria-label="New release template">
            <h3>New release template</h3>
            <Field label="Template name" path="name" value={name} onChange={setName} validate={rules.required} required />
            <Field label="Template key" path="key" value={key} onChange={setKey} validate={rules.required} required />
            <div className="field">
              <label htmlFor="release-template-steps">Steps</label>
              <textarea
                id="release-template-steps"
                rows={4}
                value={steps}
                onChange={(e) => setSteps(e.target.value)}
                aria-describedby="release-template-steps-hint"
              />
              <small id="release-template-steps-hint" className="muted">
                One step a line: percent, hold in seconds, and &quot;approval&quot; when the step waits for one (the last serves 100).
              </small>
            </div>
            <div className="field">
              <label htmlFor="release-template-guardrails">Metric guardrails</label>
              <textarea
                id="release-template-guardrails"
                rows={2}
                value={guardrails}
                onChange={(e) => setGuardrails(e.target.value)}
                aria-describedby="release-template-guardrails-hint"
              />
              <small id="release-template-guardrails-hint" className="muted">
                One a line: a metric key and the users each arm needs, such as &quot;error-rate 500&quot;.
              </small>
            </div>
            <ErrorMessage error={create.error} inline={['name', 'key']} />
            <Button type="submit" variant="primary" busy={create.isPending} busyText="Creating…">
              Create template
            </Button>
          </form>
        </ProblemsProvider>
      )}
      {deleting && (
        <ConfirmDialog
          open
          title={`Delete release template ${deleting.name}?`}
          confirmLabel="Delete template"
          onConfirm={() => remove.mutate(deleting)}
          onCancel={() => {
            remove.reset();
            setDeleting(undefined);
          }}
          pending={remove.isPending}
          error={remove.error}
        >
          <p>Releases started from it keep their plan.</p>
        </ConfirmDialog>
      )}
    </Section>
  );
}

/** A release plan as a change request holds it (issue 33): what reviewers approve, in words. */
export function ReleasePlanSummary({ plan }: { plan: Record<string, unknown> }) {
  const p = plan as Pick<Template, 'steps' | 'guardrails'> & { variant: string; baseline: string; template?: string };
  return (
    <div className="small-text">
      <p>
        Starts a release of <strong>{p.variant}</strong> (the rest on {p.baseline}){p.template ? `, from template ${p.template}` : ''}, whose steps then run by
        themselves:
      </p>
      <ol>
        {p.steps.map((s, i) => (
          <li key={i}>
            {s.percent} %{s.holdSeconds ? ` for at least ${duration(s.holdSeconds)}` : ''}
            {s.approval ? ', after an approval' : ''}
          </li>
        ))}
      </ol>
      <p>
        Guardrails:{' '}
        {p.guardrails.length === 0
          ? 'none'
          : p.guardrails.map((g) => ('metric' in g ? `${g.metric}${g.minUsers ? ` (${g.minUsers} users each)` : ''}` : g.prometheus.query)).join(', ')}
      </p>
    </div>
  );
}

/**
 * Starts a release of the flag in one environment, from a template or from steps written out; in a
 * protected environment the plan is proposed in a change request instead (reviewers approve it, applying
 * it starts the release).
 */
function StartRelease({
  projectKey,
  environment,
  slug,
  variants,
}: {
  projectKey: string;
  environment: { key: string; name: string; protected: boolean };
  slug: string;
  variants: string[];
}) {
  const [open, setOpen] = useState(false);
  const [variant, setVariant] = useState(variants.includes('on') ? 'on' : (variants[0] ?? ''));
  const [baseline, setBaseline] = useState(variants.includes('off') ? 'off' : (variants[1] ?? ''));
  const [template, setTemplate] = useState('');
  const [steps, setSteps] = useState('5 3600\n25 7200 approval\n100');
  const [guardrails, setGuardrails] = useState('');
  const templates = useQuery({
    queryKey: ['release-templates', projectKey],
    queryFn: () => api<{ templates: Template[] }>('GET', `/projects/${encodeURIComponent(projectKey)}/release-templates`),
    enabled: open,
  });
  const start = useMutation({
    mutationFn: () => {
      const plan = {
        variant,
        baseline,
        ...(template ? { template } : { steps: parseSteps(steps) }),
        ...(guardrails.trim() || !template ? { guardrails: parseGuardrails(guardrails) } : {}),
      };
      return environment.protected
        ? api('POST', `/projects/${encodeURIComponent(projectKey)}/change-requests`, {
            environment: environment.key,
            title: `Release ${variant} of ${slug} in ${environment.name}`,
            releases: [{ slug, plan }],
            submit: true,
          })
        : api('POST', base(projectKey, environment.key, slug), plan);
    },
    meta: { error: false, invalidates: [['releases', projectKey, environment.key, slug], ['flags', projectKey], ['change-requests', projectKey], ['audit']] },
    onSuccess: () => {
      toast.success(environment.protected ? `Proposed in a change request: ${environment.name} is protected` : `Started the release in ${environment.name}`);
      setOpen(false);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    start.mutate();
  };
  return (
    <>
      <Button onClick={() => setOpen(true)}>{environment.protected ? 'Propose a release…' : 'Start a release…'}</Button>
      <Dialog
        title={`${environment.protected ? 'Propose' : 'Start'} a release of ${slug} in ${environment.name}`}
        open={open}
        onClose={() => {
          start.reset();
          setOpen(false);
        }}
      >
        <ProblemsProvider value={problemsOf(start.error)}>
          <form onSubmit={submit}>
            {environment.protected && (
              <p className="muted">{environment.name} is protected: the plan goes to a change request, and starts once approved and applied.</p>
            )}
            <Select label="Variant to release" path="variant" value={variant} onChange={setVariant}>
              {variants.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </Select>
            <Select label="Baseline" path="baseline" value={baseline} onChange={setBaseline}>
              {variants.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </Select>
            <Select label="Template" path="template" value={template} onChange={setTemplate}>
              <option value="">None: the steps below</option>
              {(templates.data?.templates ?? []).map((t) => (
                <option key={t.key} value={t.key}>
                  {t.name}
                </option>
              ))}
            </Select>
            {!template && (
              <div className="field">
                <label htmlFor={`start-steps-${environment.key}`}>Steps</label>
                <textarea id={`start-steps-${environment.key}`} rows={4} value={steps} onChange={(e) => setSteps(e.target.value)} />
                <small className="muted">One step a line: percent, hold in seconds, and &quot;approval&quot; when the step waits for one.</small>
              </div>
            )}
            <div className="field">
              <label htmlFor={`start-guardrails-${environment.key}`}>Metric guardrails</label>
              <textarea id={`start-guardrails-${environment.key}`} rows={2} value={guardrails} onChange={(e) => setGuardrails(e.target.value)} />
              <small className="muted">One a line: a metric key and the users each arm needs{template ? " (empty: the template's)" : ''}.</small>
            </div>
            <ErrorMessage error={start.error} inline={['variant', 'baseline', 'template']} />
            <div className="actions">
              <Button type="submit" variant="primary" busy={start.isPending} busyText="Starting…">
                {environment.protected ? 'Propose release' : 'Start release'}
              </Button>
              <Button
                onClick={() => {
                  start.reset();
                  setOpen(false);
                }}
              >
                Cancel
              </Button>
            </div>
          </form>
        </ProblemsProvider>
      </Dialog>
    </>
  );
}
