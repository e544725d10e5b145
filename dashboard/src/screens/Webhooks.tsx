import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { api } from '../api.ts';
import { useCanWrite } from '../session.ts';
import { Checkbox, ConfirmDelete, CopyButton, ErrorMessage, Field, formatDate, Loading, Section } from '../ui.tsx';
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

function WebhookList({ projectKey, open, onOpen }: { projectKey: string; open: string | null; onOpen: (id: string | null) => void }) {
  const canWrite = useCanWrite();
  const client = useQueryClient();
  const list = useQuery({ queryKey: ['webhooks', projectKey], queryFn: () => api<{ webhooks: Webhook[] }>('GET', pathOf(projectKey)) });
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const remove = useMutation({
    mutationFn: (id: string) => api<void>('DELETE', `${pathOf(projectKey)}/${encodeURIComponent(id)}`),
    onSuccess: (_data, id) => {
      setDeleting(null);
      if (open === id) onOpen(null);
      return client.invalidateQueries({ queryKey: ['webhooks', projectKey] });
    },
  });
  return (
    <Section title="Webhooks">
      {list.isPending && <Loading what="the webhooks" />}
      <ErrorMessage error={list.error} />
      {list.data && list.data.webhooks.length === 0 && <p className="muted">No webhook: flag changes are not sent anywhere.</p>}
      {list.data && list.data.webhooks.length > 0 && (
        <table>
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
                <td>{formatDate(w.createdAt)}</td>
                <td className="actions">
                  <button type="button" className="small" aria-pressed={open === w.id} onClick={() => onOpen(open === w.id ? null : w.id)}>
                    Deliveries
                  </button>
                  {canWrite && (
                    <button type="button" className="small danger" onClick={() => setDeleting(w)}>
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {deleting && (
        <ConfirmDelete
          what="webhook"
          name={deleting.id}
          action="Delete webhook"
          onConfirm={() => remove.mutate(deleting.id)}
          onCancel={() => {
            setDeleting(null);
            remove.reset();
          }}
          pending={remove.isPending}
          error={remove.error}
        />
      )}
    </Section>
  );
}

function Deliveries({ projectKey, webhookId }: { projectKey: string; webhookId: string }) {
  const canWrite = useCanWrite();
  const client = useQueryClient();
  const path = `${pathOf(projectKey)}/${encodeURIComponent(webhookId)}/deliveries`;
  const list = useQuery({ queryKey: ['webhook-deliveries', projectKey, webhookId], queryFn: () => api<{ deliveries: WebhookDelivery[] }>('GET', path) });
  const redeliver = useMutation({
    mutationFn: (deliveryId: string) => api<WebhookDelivery>('POST', `${path}/${encodeURIComponent(deliveryId)}/redeliver`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['webhook-deliveries', projectKey, webhookId] }),
  });
  return (
    <Section title="Deliveries">
      <p>
        <button type="button" className="small" onClick={() => list.refetch()} disabled={list.isFetching}>
          {list.isFetching ? 'Refreshing…' : 'Refresh'}
        </button>
      </p>
      {list.isPending && <Loading what="the deliveries" />}
      <ErrorMessage error={list.error} />
      <ErrorMessage error={redeliver.error} />
      {list.data && list.data.deliveries.length === 0 && <p className="muted">No delivery yet.</p>}
      {list.data && list.data.deliveries.length > 0 && (
        <table>
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
                  {d.status}
                  {d.status === 'pending' && d.nextAttemptAt && <small className="muted"> (next {formatDate(d.nextAttemptAt)})</small>}
                  {d.lastError && <small className="muted"> — {d.lastError}</small>}
                </td>
                <td title={d.history.map((a) => `${a.attempt}: ${a.ok ? 'ok' : (a.error ?? 'failed')} ${a.statusCode ?? ''}`).join('\n')}>{d.attempts}</td>
                <td>{formatDate(d.createdAt)}</td>
                <td>
                  {canWrite && d.status !== 'pending' && (
                    <button type="button" className="small" disabled={redeliver.isPending} onClick={() => redeliver.mutate(d.id)}>
                      Redeliver
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

function NewWebhook({ projectKey }: { projectKey: string }) {
  const canWrite = useCanWrite();
  const client = useQueryClient();
  const presetId = useId();
  const [url, setUrl] = useState('');
  const [preset, setPreset] = useState('');
  const [events, setEvents] = useState<string[]>([...EVENTS]);
  const create = useMutation({
    mutationFn: () =>
      api<Webhook & { secret: string | null }>('POST', pathOf(projectKey), {
        url,
        ...(events.length === EVENTS.length ? {} : { events }),
        ...(preset ? { preset } : {}),
      }),
    onSuccess: () => {
      setUrl('');
      return client.invalidateQueries({ queryKey: ['webhooks', projectKey] });
    },
  });
  if (!canWrite) return null;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const toggle = (name: string, on: boolean) =>
    setEvents((list) => (on ? EVENTS.filter((e) => e === name || list.includes(e)) : list.filter((e) => e !== name)));
  return (
    <Section title="New webhook">
      <form onSubmit={submit}>
        <Field label="URL" value={url} onChange={setUrl} type="url" required hint="Where each event is POSTed (https)" />
        <div className="field">
          <label htmlFor={presetId}>Format</label>
          <select id={presetId} value={preset} onChange={(e) => setPreset(e.target.value)}>
            {PRESETS.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </select>
        </div>
        <fieldset>
          <legend>Events</legend>
          {EVENTS.map((name) => (
            <Checkbox key={name} label={name} checked={events.includes(name)} onChange={(on) => toggle(name, on)} />
          ))}
        </fieldset>
        <button type="submit" className="primary" disabled={create.isPending || events.length === 0}>
          {create.isPending ? 'Creating…' : 'Create webhook'}
        </button>
      </form>
      <ErrorMessage error={create.error} />
      {create.data?.secret && (
        <div role="status" className="card">
          <p>
            Signing secret of the new webhook, shown this once: verify the <code>webhook-signature</code> header with it.
          </p>
          <p>
            <code>{create.data.secret}</code> <CopyButton text={create.data.secret} label="Copy secret" />
          </p>
        </div>
      )}
    </Section>
  );
}
