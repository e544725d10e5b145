import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { api, type FlagEntry } from '../api.ts';
import { useCanWrite } from '../session.ts';
import {
  Badge,
  Button,
  Checkbox,
  ConfirmDialog,
  DateText,
  EmptyState,
  ErrorMessage,
  Field,
  Loading,
  problemsOf,
  ProblemsProvider,
  rules,
  Section,
  Select,
  Table,
  TextArea,
  toast,
} from '../ui/index.ts';
import { type Experiment, experimentPath, experimentsPath, experimentsQuery, type Metric, metricsPath, metricsQuery } from './experiments-api.ts';
import { ProjectHeader, useProject } from './Projects.tsx';

// Issue 32: a project's experiments per environment (list, create from a flag's split, start and stop)
// and its metrics. The results of one experiment are ExperimentResults.tsx.

const STATUS_TONE = { draft: 'muted', running: 'ok', stopped: 'warn' } as const;

export function ExperimentsScreen({ params }: { params: { key: string } }) {
  const project = useProject(params.key);
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  const environments = project.data.environments;
  const envKey = environments.some((e) => e.key === search.get('env')) ? search.get('env')! : (environments[0]?.key ?? '');
  return (
    <>
      <ProjectHeader project={project.data} current="experiments" />
      <Select
        label="Environment"
        value={envKey}
        onChange={(value) => navigate(`/projects/${encodeURIComponent(params.key)}/experiments?env=${encodeURIComponent(value)}`, { replace: true })}
      >
        {environments.map((e) => (
          <option key={e.key} value={e.key}>
            {e.name}
          </option>
        ))}
      </Select>
      {envKey && <ExperimentList projectKey={params.key} envKey={envKey} />}
      {envKey && <NewExperiment projectKey={params.key} envKey={envKey} initialFlag={search.get('flag') ?? ''} />}
      <Metrics projectKey={params.key} />
    </>
  );
}

function ExperimentList({ projectKey, envKey }: { projectKey: string; envKey: string }) {
  const canWrite = useCanWrite();
  const list = useQuery(experimentsQuery(projectKey, envKey));
  const [confirming, setConfirming] = useState<{ experiment: Experiment; action: 'start' | 'stop' } | null>(null);
  const change = useMutation({
    mutationFn: ({ experiment, action }: { experiment: Experiment; action: 'start' | 'stop' }) =>
      api<Experiment>('POST', `${experimentPath(projectKey, envKey, experiment.key)}/${action}`),
    meta: { error: false, invalidates: [['experiments', projectKey, envKey], ['audit']] },
    onSuccess: (experiment) => {
      toast.success(experiment.status === 'running' ? `Started ${experiment.name}: exposures are counted from now on` : `Stopped ${experiment.name}`);
      setConfirming(null);
    },
  });
  return (
    <Section title="Experiments">
      {list.isPending && <Loading what="the experiments" />}
      <ErrorMessage error={list.error} />
      {list.data && list.data.experiments.length === 0 && (
        <EmptyState title="No experiment in this environment">
          An experiment measures the split of one of a flag&apos;s rules: which variant does better on the metrics you choose. Create one below.
        </EmptyState>
      )}
      {list.data && list.data.experiments.length > 0 && (
        <Table label="Experiments" className="experiments">
          <thead>
            <tr>
              <th scope="col">Experiment</th>
              <th scope="col">Flag</th>
              <th scope="col">Status</th>
              <th scope="col">Started</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.experiments.map((x) => (
              <tr key={x.key}>
                <td>
                  <Link href={`/projects/${encodeURIComponent(projectKey)}/experiments/${encodeURIComponent(envKey)}/${encodeURIComponent(x.key)}`}>
                    {x.name}
                  </Link>
                  <div>
                    <small className="muted">
                      <code>{x.key}</code>
                    </small>
                  </div>
                </td>
                <td>
                  <Link href={`/projects/${encodeURIComponent(projectKey)}/flags/${encodeURIComponent(x.flagKey)}`}>
                    <code>{x.flagKey}</code>
                  </Link>
                </td>
                <td>
                  <Badge tone={STATUS_TONE[x.status]}>{x.status}</Badge>
                </td>
                <td>{x.startedAt ? <DateText iso={x.startedAt} /> : <span className="muted">not yet</span>}</td>
                <td>
                  <div className="actions">
                    {canWrite && x.status === 'draft' && (
                      <Button size="small" variant="primary" onClick={() => setConfirming({ experiment: x, action: 'start' })}>
                        Start
                      </Button>
                    )}
                    {canWrite && x.status === 'running' && (
                      <Button size="small" onClick={() => setConfirming({ experiment: x, action: 'stop' })}>
                        Stop
                      </Button>
                    )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {confirming && (
        <ConfirmDialog
          open
          title={confirming.action === 'start' ? `Start ${confirming.experiment.name}?` : `Stop ${confirming.experiment.name}?`}
          confirmLabel={confirming.action === 'start' ? 'Start experiment' : 'Stop experiment'}
          pendingLabel={confirming.action === 'start' ? 'Starting…' : 'Stopping…'}
          onConfirm={() => change.mutate(confirming)}
          onCancel={() => {
            setConfirming(null);
            change.reset();
          }}
          pending={change.isPending}
          error={change.error}
        >
          <p>
            {confirming.action === 'start'
              ? `Exposures of ${confirming.experiment.flagKey} are counted from now on, and the split it measures can no longer be edited by hand until it stops.`
              : 'No more users are counted; the results stay as they are, and the split can be edited again.'}
          </p>
        </ConfirmDialog>
      )}
    </Section>
  );
}

/** The split rules of a flag in one environment: what an experiment can measure. */
function splitRules(flag: FlagEntry | undefined, envKey: string) {
  const inEnvironment = flag?.environments.find((e) => e.environment.key === envKey);
  return (inEnvironment?.rules ?? []).filter((r) => r.serve.split);
}

function NewExperiment({ projectKey, envKey, initialFlag }: { projectKey: string; envKey: string; initialFlag: string }) {
  const canWrite = useCanWrite();
  const [, navigate] = useLocation();
  const flags = useQuery({
    queryKey: ['flags', projectKey],
    queryFn: () => api<{ flags: FlagEntry[] }>('GET', `/projects/${encodeURIComponent(projectKey)}/flags`),
  });
  const metrics = useQuery(metricsQuery(projectKey));
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const [flagKey, setFlagKey] = useState(initialFlag);
  const [ruleId, setRuleId] = useState('');
  const [control, setControl] = useState('');
  const [goals, setGoals] = useState<string[]>([]);
  const [guardrails, setGuardrails] = useState<string[]>([]);
  const [hypothesis, setHypothesis] = useState('');
  const create = useMutation({
    mutationFn: () =>
      api<Experiment>('POST', experimentsPath(projectKey, envKey), {
        key,
        name,
        flagKey,
        ...(ruleId ? { ruleId } : {}),
        controlVariant: control,
        metrics: goals,
        guardrails,
        ...(hypothesis.trim() ? { hypothesis } : {}),
      }),
    meta: { error: false, invalidates: [['experiments', projectKey, envKey], ['audit']] },
    onSuccess: (experiment) => {
      toast.success(`Created ${experiment.name}: start it when the split is ready`);
      navigate(`/projects/${encodeURIComponent(projectKey)}/experiments/${encodeURIComponent(envKey)}/${encodeURIComponent(experiment.key)}`);
    },
  });
  if (!canWrite) return null;
  const withSplits = (flags.data?.flags ?? []).filter((f) => splitRules(f, envKey).length > 0);
  const flag = withSplits.find((f) => f.slug === flagKey);
  const rulesOfFlag = splitRules(flag, envKey);
  const rule = rulesOfFlag.find((r) => r.id === ruleId) ?? (rulesOfFlag.length === 1 ? rulesOfFlag[0] : undefined);
  const variants = rule?.serve.split?.weights.map((w) => w.variant) ?? [];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const toggle = (list: string[], set: (next: string[]) => void, metricKey: string, on: boolean) =>
    set(on ? [...list, metricKey] : list.filter((k) => k !== metricKey));
  return (
    <Section title="New experiment">
      <ErrorMessage error={flags.error ?? metrics.error} />
      {flags.data && withSplits.length === 0 && (
        <EmptyState title="No flag with a split in this environment">
          An experiment measures a split: give a flag a rule that serves a split (for example 50/50) on its page, then come back.
        </EmptyState>
      )}
      {metrics.data && metrics.data.metrics.length === 0 && (
        <EmptyState title="No metric yet">An experiment needs at least one metric: create one under Metrics below.</EmptyState>
      )}
      {withSplits.length > 0 && (metrics.data?.metrics.length ?? 0) > 0 && (
        <ProblemsProvider value={problemsOf(create.error)}>
          <form className="stack" onSubmit={submit} noValidate>
            <ErrorMessage error={create.error} inline={['body.key', 'body.name', 'body.flagKey', 'body.controlVariant', 'body.metrics']} />
            <div className="row">
              <Field label="Name" value={name} onChange={setName} path="body.name" required validate={rules.required} placeholder="Checkout button" />
              <Field label="Key" value={key} onChange={setKey} path="body.key" required validate={rules.required} placeholder="checkout-button" />
            </div>
            <div className="row">
              <Select
                label="Flag"
                value={flagKey}
                path="body.flagKey"
                onChange={(value) => {
                  setFlagKey(value);
                  setRuleId('');
                  setControl('');
                }}
              >
                <option value="">Choose a flag with a split…</option>
                {withSplits.map((f) => (
                  <option key={f.slug} value={f.slug}>
                    {f.slug}
                  </option>
                ))}
              </Select>
              {rulesOfFlag.length > 1 && (
                <Select label="Split rule" value={ruleId} onChange={setRuleId} path="body.ruleId">
                  <option value="">Choose the rule…</option>
                  {rulesOfFlag.map((r) => (
                    <option key={r.id} value={r.id}>
                      {r.name || r.id}
                    </option>
                  ))}
                </Select>
              )}
              <Select label="Control variant" value={control} onChange={setControl} path="body.controlVariant" disabled={variants.length === 0}>
                <option value="">Choose the baseline…</option>
                {variants.map((v) => (
                  <option key={v} value={v}>
                    {v}
                  </option>
                ))}
              </Select>
            </div>
            <fieldset>
              <legend>Goal metrics</legend>
              {metrics.data?.metrics.map((m) => (
                <Checkbox
                  key={m.key}
                  label={`${m.name} (${m.type}, ${m.direction})`}
                  checked={goals.includes(m.key)}
                  onChange={(on) => toggle(goals, setGoals, m.key, on)}
                />
              ))}
            </fieldset>
            <fieldset>
              <legend>Guardrail metrics (optional)</legend>
              {metrics.data?.metrics.map((m) => (
                <Checkbox key={m.key} label={m.name} checked={guardrails.includes(m.key)} onChange={(on) => toggle(guardrails, setGuardrails, m.key, on)} />
              ))}
            </fieldset>
            <TextArea label="Hypothesis (optional)" value={hypothesis} onChange={setHypothesis} path="body.hypothesis" rows={2} />
            <div>
              <Button type="submit" variant="primary" busy={create.isPending} busyText="Creating…" disabled={!flagKey || !control || goals.length === 0}>
                Create experiment
              </Button>
            </div>
          </form>
        </ProblemsProvider>
      )}
    </Section>
  );
}

function Metrics({ projectKey }: { projectKey: string }) {
  const canWrite = useCanWrite();
  const list = useQuery(metricsQuery(projectKey));
  const [key, setKey] = useState('');
  const [name, setName] = useState('');
  const [event, setEvent] = useState('');
  const [type, setType] = useState<Metric['type']>('proportion');
  const [denominator, setDenominator] = useState('');
  const [direction, setDirection] = useState<Metric['direction']>('increase');
  const [windowHours, setWindowHours] = useState('72');
  const create = useMutation({
    mutationFn: () =>
      api<Metric>('POST', metricsPath(projectKey), {
        key,
        name,
        event,
        type,
        direction,
        ...(type === 'ratio' ? { denominatorEvent: denominator } : {}),
        ...(windowHours ? { windowHours: Number(windowHours) } : {}),
      }),
    meta: { error: false, invalidates: [['metrics', projectKey], ['audit']] },
    onSuccess: (metric) => {
      toast.success(`Created the metric ${metric.name}`);
      setKey('');
      setName('');
      setEvent('');
      setDenominator('');
    },
  });
  return (
    <Section title="Metrics">
      {list.isPending && <Loading what="the metrics" />}
      <ErrorMessage error={list.error} />
      {list.data && list.data.metrics.length > 0 && (
        <Table label="Metrics" className="metrics">
          <thead>
            <tr>
              <th scope="col">Metric</th>
              <th scope="col">Event</th>
              <th scope="col">Type</th>
              <th scope="col">Better when</th>
              <th scope="col">Window</th>
            </tr>
          </thead>
          <tbody>
            {list.data.metrics.map((m) => (
              <tr key={m.key}>
                <td>
                  {m.name}{' '}
                  <small className="muted">
                    <code>{m.key}</code>
                  </small>
                </td>
                <td>
                  <code>{m.event}</code>
                  {m.denominatorEvent && (
                    <>
                      {' / '}
                      <code>{m.denominatorEvent}</code>
                    </>
                  )}
                </td>
                <td>{m.type}</td>
                <td>{m.direction === 'increase' ? 'it rises' : 'it falls'}</td>
                <td>{m.windowHours} h</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {canWrite && (
        <ProblemsProvider value={problemsOf(create.error)}>
          <form
            className="stack"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              create.mutate();
            }}
          >
            <h3>New metric</h3>
            <ErrorMessage error={create.error} inline={['body.key', 'body.name', 'body.event', 'body.denominatorEvent', 'body.windowHours']} />
            <div className="row">
              <Field label="Name" value={name} onChange={setName} path="body.name" required placeholder="Purchase rate" />
              <Field label="Key" value={key} onChange={setKey} path="body.key" required placeholder="purchase-rate" />
              <Field label="Tracked event" value={event} onChange={setEvent} path="body.event" required placeholder="purchase" />
            </div>
            <div className="row">
              <Select label="Type" value={type} onChange={(v) => setType(v as Metric['type'])} path="body.type">
                <option value="proportion">Proportion: share of users with the event</option>
                <option value="mean">Mean: sum of the event&apos;s values per user</option>
                <option value="ratio">Ratio: sum of one event over another</option>
              </Select>
              {type === 'ratio' && <Field label="Denominator event" value={denominator} onChange={setDenominator} path="body.denominatorEvent" required />}
              <Select label="Better when it" value={direction} onChange={(v) => setDirection(v as Metric['direction'])} path="body.direction">
                <option value="increase">rises</option>
                <option value="decrease">falls (errors, latency)</option>
              </Select>
              <Field label="Window (hours after exposure)" value={windowHours} onChange={setWindowHours} path="body.windowHours" inputMode="numeric" />
            </div>
            <div>
              <Button type="submit" busy={create.isPending} busyText="Creating…" disabled={!key || !name || !event}>
                Create metric
              </Button>
            </div>
          </form>
        </ProblemsProvider>
      )}
    </Section>
  );
}
