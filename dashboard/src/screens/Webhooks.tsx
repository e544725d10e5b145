import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api.ts';
import { useCanWrite } from '../session.ts';
import {
  Badge,
  Button,
  Checkbox,
  ConfirmDelete,
  CopyButton,
  DateText,
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
import { ProjectHeader, useProject } from './Projects.tsx';

// Issue 23: a project's webhooks on flag changes (docs/api.md, "project webhooks"): the list, a new
// webhook (its signing secret shown once), deletion with confirmation, and each webhook's deliveries
// with a redelivery.

const EVENTS = [
  'flag.created',
  'flag.updated',
  'flag.deleted',
  'change_request.opened',
  'change_request.approved',
  'change_request.applied',
  'scheduled_change.applied',
  'release.started',
  'release.step_started',
  'release.waiting_approval',
  'release.completed',
  'release.rolled_back',
] as const;

const PRESETS = [
  { value: '', label: 'Signed JSON (Standard Webhooks)' },
  { value: 'slack', label: 'Slack message' },
  { value: 'teams', label: 'Microsoft Teams message' },
  { value: 'discord', label: 'Discord message' },
] as const;

interface Webhook {
  id: string;
  url: string;
  events: string[];
  preset: string | null;
  createdAt: string;
  updatedAt: string;
}

interface WebhookDelivery {
  id: string;
  seq: number;
  event: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  history: Array<{ attempt: number; startedAt: string; ok: boolean; statusCode: number | null; error: string | null }>;
}

const pathOf = (projectKey: string) => `/projects/${encodeURIComponent(projectKey)}/webhooks`;

export function WebhooksScreen({ params }: { params: { key: string } }) {
  const project = useProject(params.key);
  const [open, setOpen] = useState<string | null>(null);
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  return (
    <>
      <ProjectHeader project={project.data} current="webhooks" />
      <WebhookList projectKey={params.key} open={open} onOpen={setOpen} />
      {open && <Deliveries projectKey={params.key} webhookId={open} />}
      <NewWebhook projectKey={params.key} />
    </>
  );
}

/** The host of a webhook's URL: what a person recognises it by (and types to confirm its deletion). */
const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

const STATUS_TONE = { delivered: 'ok', failed: 'danger', pending: 'warn' } as const;

function WebhookList({ projectKey, open, onOpen }: { projectKey: string; open: string | null; onOpen: (id: string | null) => void }) {
  const canWrite = useCanWrite();
  const list = useQuery({ queryKey: ['webhooks', projectKey], queryFn: () => api<{ webhooks: Webhook[] }>('GET', pathOf(projectKey)) });
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const remove = useMutation({
    mutationFn: (id: string) => api<void>('DELETE', `${pathOf(projectKey)}/${encodeURIComponent(id)}`),
    meta: { error: false, invalidates: [['webhooks', projectKey], ['audit']] },
    onSuccess: (_data, id) => {
      toast.success(`Deleted the webhook to ${deleting ? hostOf(deleting.url) : 'its URL'}`);
      setDeleting(null);
      if (open === id) onOpen(null);
    },
  });
  return (
    <Section title="Webhooks">
      {list.isPending && <Loading what="the webhooks" />}
      <ErrorMessage error={list.error} />
      {list.data && list.data.webhooks.length === 0 && (
        <EmptyState title="No webhook: flag changes are not sent anywhere.">
          A webhook POSTs each flag change and change request of this project to a URL: your service, Slack, Microsoft Teams or Discord. Create one below.
        </EmptyState>
      )}
      {list.data && list.data.webhooks.length > 0 && (
        <Table label="Webhooks" className="webhooks">
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Kind</th>
              <th scope="col">Events</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.webhooks.map((w) => (
              <tr key={w.id}>
                <td>
                  <code>{w.url}</code>
                </td>
                <td>{PRESETS.find((p) => p.value === (w.preset ?? ''))?.label ?? w.preset}</td>
                <td>{w.events.length === EVENTS.length ? 'All' : w.events.join(', ')}</td>
                <td>
                  <DateText iso={w.createdAt} />
                </td>
                <td>
                  <div className="actions">
                    <Button size="small" aria-pressed={open === w.id} onClick={() => onOpen(open === w.id ? null : w.id)}>
                      Deliveries
                    </Button>
                    {canWrite && (
                      <Button size="small" variant="danger-text" onClick={() => setDeleting(w)}>
                        Delete
                      </Button>
                    )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {deleting && (
        <ConfirmDelete
          what="webhook"
          name={hostOf(deleting.url)}
          action="Delete webhook"
          onConfirm={() => remove.mutate(deleting.id)}
          onCancel={() => {
            setDeleting(null);
            remove.reset();
          }}
          pending={remove.isPending}
          error={remove.error}
        >
          <p>
            Events stop going to <code>{deleting.url}</code>, and its deliveries are deleted with it. This cannot be undone.
          </p>
        </ConfirmDelete>
      )}
    </Section>
  );
}

function Deliveries({ projectKey, webhookId }: { projectKey: string; webhookId: string }) {
  const canWrite = useCanWrite();
  const path = `${pathOf(projectKey)}/${encodeURIComponent(webhookId)}/deliveries`;
  const key = ['webhook-deliveries', projectKey, webhookId];
  const list = useQuery({ queryKey: key, queryFn: () => api<{ deliveries: WebhookDelivery[] }>('GET', path) });
  const redeliver = useMutation({
    mutationFn: (deliveryId: string) => api<WebhookDelivery>('POST', `${path}/${encodeURIComponent(deliveryId)}/redeliver`),
    meta: { success: 'Queued the delivery again', error: 'Not redelivered', invalidates: [key, ['audit']] },
  });
  return (
    <Section
      title="Deliveries"
      actions={
        <Button size="small" onClick={() => list.refetch()} busy={list.isFetching} busyText="Refreshing…">
          Refresh
        </Button>
      }
    >
      {list.isPending && <Loading what="the deliveries" />}
      <ErrorMessage error={list.error} />
      {list.data && list.data.deliveries.length === 0 && <EmptyState title="No delivery yet">The next flag change of this project is sent here.</EmptyState>}
      {list.data && list.data.deliveries.length > 0 && (
        <Table label="Deliveries" className="deliveries">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Queued</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.deliveries.map((d) => (
              <tr key={d.id}>
                <td>{d.seq}</td>
                <td>
                  <code>{d.event}</code>
                </td>
                <td>
                  <Badge tone={STATUS_TONE[d.status]}>{d.status}</Badge>
                  {d.status === 'pending' && d.nextAttemptAt && (
                    <small className="muted">
                      {' '}
                      (next <DateText iso={d.nextAttemptAt} />)
                    </small>
                  )}
                  {d.lastError && <small className="muted"> {d.lastError}</small>}
                </td>
                <td title={d.history.map((a) => `${a.attempt}: ${a.ok ? 'ok' : (a.error ?? 'failed')} ${a.statusCode ?? ''}`).join('\n')}>
                  {plural(d.attempts, 'attempt')}
                </td>
                <td>
                  <DateText iso={d.createdAt} />
                </td>
                <td>
                  {canWrite && d.status !== 'pending' && (
                    <Button size="small" busy={redeliver.isPending && redeliver.variables === d.id} busyText="Queuing…" onClick={() => redeliver.mutate(d.id)}>
                      Redeliver
                    </Button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </Section>
  );
}

function NewWebhook({ projectKey }: { projectKey: string }) {
  const canWrite = useCanWrite();
  const [url, setUrl] = useState('');
  const [preset, setPreset] = useState('');
  const [events, setEvents] = useState<string[]>([...EVENTS]);
  const create = useMutation({
    mutationFn: () =>
      api<Webhook & { secret: string | null }>('POST', pathOf(projectKey), {
        url: url.trim(),
        ...(events.length === EVENTS.length ? {} : { events }),
        ...(preset ? { preset } : {}),
      }),
    meta: { success: 'Created the webhook', error: false, invalidates: [['webhooks', projectKey], ['audit']] },
    onSuccess: () => setUrl(''),
  });
  if (!canWrite) return null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!rules.required(url) && !rules.url(url)) create.mutate();
  };
  const toggle = (name: string, on: boolean) =>
    setEvents((list) => (on ? EVENTS.filter((e) => e === name || list.includes(e)) : list.filter((e) => e !== name)));
  return (
    <Section title="New webhook">
      <ProblemsProvider value={problemsOf(create.error)}>
        <form onSubmit={submit} aria-label="New webhook">
          <Field
            label="URL"
            path="url"
            value={url}
            onChange={setUrl}
            type="url"
            inputMode="url"
            validate={(v) => rules.required(v) ?? rules.url(v)}
            required
            hint="Where each event is POSTed (https)"
          />
          <Select label="Format" path="preset" value={preset} onChange={setPreset}>
            {PRESETS.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </Select>
          <fieldset className="events">
            <legend>Events</legend>
            {EVENTS.map((name) => (
              <Checkbox key={name} label={name} checked={events.includes(name)} onChange={(on) => toggle(name, on)} />
            ))}
          </fieldset>
          <ErrorMessage error={create.error} inline={['url', 'preset']} />
          <Button type="submit" variant="primary" busy={create.isPending} busyText="Creating…" disabled={events.length === 0}>
            Create webhook
          </Button>
        </form>
      </ProblemsProvider>
      {create.data?.secret && (
        <div role="status" className="notice">
          <p>
            Signing secret of the new webhook, shown this once: verify the <code>webhook-signature</code> header with it.
          </p>
          <p className="secret">
            <code>{create.data.secret}</code> <CopyButton text={create.data.secret} label="Copy secret" />
          </p>
        </div>
      )}
    </Section>
  );
}
