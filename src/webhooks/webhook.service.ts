import { randomBytes } from 'node:crypto';
import { type Actor, type AuditLog, changesOf, unchanged } from '../audit/index.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { DomainEvents, RecordedAuditEntry } from '../events/index.ts';
import { redactChanges } from '../identity/index.ts';
import type { DeliveryAttempt } from '../delivery/index.ts';
import type { ProjectService } from '../projects/index.ts';
import { bodyOf } from './webhook-messages.ts';
import type { StoredWebhook, WebhookStore } from './webhook.store.ts';
import {
  isWebhookUrl,
  payloadOf,
  type ProjectWebhook,
  WEBHOOK_EVENTS,
  type WebhookDelivery,
  type WebhookEvent,
  webhookEventOf,
  type WebhookPreset,
} from './webhook.ts';

export interface WebhookServiceDeps {
  db: Db;
  store: WebhookStore;
  projects: Pick<ProjectService, 'getProject'>;
  audit: Pick<AuditLog, 'record'>;
  events: DomainEvents;
  clock: () => Date;
  /**
   * FLAGPOST_WEBHOOK_TARGETS applied to a URL being set (the delivery engine's WebhookTargetRule): a URL
   * deliveries could never reach (a loopback or private literal under `public`) is refused upfront, as
   * for a form's webhooks (issue 29).
   */
  webhookTargets?: { refusal(url: string): string | undefined };
}

export interface WebhookInput {
  url: string;
  events?: WebhookEvent[];
  preset?: WebhookPreset;
}

/** Audited fields; the URL under the name viewers never see (identity's viewer redaction). */
const auditedOf = (w: ProjectWebhook) => ({ webhookUrl: w.url, events: w.events, preset: w.preset });

/**
 * Project webhooks (issue 23, docs/adr/0040-project-webhooks.md): subscriptions to flag-change events.
 * Every audit entry that is such an event is queued for the project's subscribed webhooks in the
 * transaction that writes it (`audit.recorded`), so a rolled-back change sends nothing and each
 * webhook's deliveries are numbered in commit order; `WebhookWorker` sends them.
 */
export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {
    deps.events.onTransaction('audit.recorded', (event, trx) => this.queue(trx, event.entry));
  }

  /** A well-formed URL that deliveries may reach under FLAGPOST_WEBHOOK_TARGETS; a validation error otherwise. */
  private checkUrl(url: string): void {
    checkUrlForm(url);
    const why = this.deps.webhookTargets?.refusal(url);
    if (why) throw AppError.validation([{ field: 'body.url', reason: why }]);
  }

  /** Creates a webhook; a generic one gets its signing secret, answered here once. */
  async create(projectKey: string, input: WebhookInput, actor: Actor): Promise<{ webhook: ProjectWebhook; secret: string | null }> {
    const project = await this.deps.projects.getProject(projectKey);
    this.checkUrl(input.url);
    const now = nowIso(this.deps.clock);
    const preset = input.preset ?? null;
    const webhook: StoredWebhook = {
      id: newId(),
      projectId: project.id,
      url: input.url,
      events: eventsOf(input.events),
      preset,
      createdAt: now,
      updatedAt: now,
      // Standard Webhooks style: `whsec_` + base64 of 32 random bytes. Chat services verify no signature.
      secret: preset === null ? `whsec_${randomBytes(32).toString('base64')}` : null,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.insert(trx, webhook);
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'webhook',
        entityId: webhook.id,
        action: 'webhook.created',
        changes: changesOf(null, auditedOf(webhook), ['webhookUrl', 'events', 'preset']),
      });
    });
    const { secret, ...view } = webhook;
    return { webhook: view, secret };
  }

  async list(projectKey: string): Promise<ProjectWebhook[]> {
    const project = await this.deps.projects.getProject(projectKey);
    return this.deps.store.listForProject(this.deps.db, project.id);
  }

  async get(projectKey: string, id: string): Promise<ProjectWebhook> {
    const project = await this.deps.projects.getProject(projectKey);
    const found = await this.deps.store.find(this.deps.db, project.id, id);
    if (!found) throw new AppError('not_found', message('webhookNotFound', { id, projectKey }));
    const { secret: _secret, ...webhook } = found;
    return webhook;
  }

  /** Changes the URL or the events (absent keeps); the preset and the secret stay. */
  async update(projectKey: string, id: string, input: { url?: string; events?: WebhookEvent[] }, actor: Actor): Promise<ProjectWebhook> {
    const before = await this.get(projectKey, id);
    if (input.url !== undefined) this.checkUrl(input.url);
    const after: ProjectWebhook = {
      ...before,
      url: input.url ?? before.url,
      events: input.events === undefined ? before.events : eventsOf(input.events),
      updatedAt: nowIso(this.deps.clock),
    };
    await this.deps.db.transaction().execute(async (trx) => {
      if (!(await this.deps.store.update(trx, after))) throw new AppError('not_found', message('webhookNotFound', { id, projectKey }));
      await this.deps.audit.record(trx, actor, {
        projectId: after.projectId,
        entity: 'webhook',
        entityId: id,
        action: 'webhook.updated',
        changes: { webhookUrl: unchanged(before.url), ...changesOf(auditedOf(before), auditedOf(after), ['webhookUrl', 'events']) },
      });
    });
    return after;
  }

  /** Deletes a webhook with its deliveries and their history; what was pending is never sent. */
  async delete(projectKey: string, id: string, actor: Actor): Promise<void> {
    const before = await this.get(projectKey, id);
    await this.deps.db.transaction().execute(async (trx) => {
      if (!(await this.deps.store.delete(trx, before.projectId, id))) throw new AppError('not_found', message('webhookNotFound', { id, projectKey }));
      await this.deps.audit.record(trx, actor, {
        projectId: before.projectId,
        entity: 'webhook',
        entityId: id,
        action: 'webhook.deleted',
        changes: changesOf(auditedOf(before), null, ['webhookUrl', 'events', 'preset']),
      });
    });
  }

  /** The newest `limit` deliveries of a webhook with their attempts. */
  async deliveries(projectKey: string, id: string, limit: number): Promise<Array<{ delivery: WebhookDelivery; attempts: DeliveryAttempt[] }>> {
    const webhook = await this.get(projectKey, id);
    return this.deps.store.listDeliveries(this.deps.db, webhook.id, limit);
  }

  /**
   * Sends a delivery's event again as a new delivery (a new id, so a receiver that dropped the first as
   * a duplicate takes it), queued after the webhook's other events.
   */
  async redeliver(projectKey: string, id: string, deliveryId: string, actor: Actor): Promise<WebhookDelivery> {
    const webhook = await this.get(projectKey, id);
    const original = await this.deps.store.findDelivery(this.deps.db, webhook.id, deliveryId);
    if (!original) throw new AppError('not_found', message('webhookDeliveryNotFound', { id: deliveryId }));
    const newIdOf = await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      const queued = await this.deps.store.enqueue(trx, webhook.id, original.event, original.payload, nowIso(this.deps.clock));
      await this.deps.audit.record(trx, actor, {
        projectId: webhook.projectId,
        entity: 'webhook',
        entityId: webhook.id,
        action: 'webhook.redelivered',
        changes: { webhookUrl: unchanged(webhook.url), delivery: { before: original.id, after: queued } },
      });
      await emit({ type: 'webhook.queued', webhookId: webhook.id });
      return queued;
    });
    const queued = await this.deps.store.findDelivery(this.deps.db, webhook.id, newIdOf);
    if (!queued) throw new AppError('not_found', message('webhookDeliveryNotFound', { id: newIdOf }));
    return queued;
  }

  /** In the transaction of an audit entry: queues it for every webhook of its project that wants its event. */
  private async queue(trx: Executor, entry: RecordedAuditEntry): Promise<void> {
    const event = webhookEventOf(entry);
    if (event === undefined || entry.projectId === null) return;
    const webhooks = (await this.deps.store.listForProject(trx, entry.projectId)).filter((w) => w.events.includes(event));
    if (webhooks.length === 0) return;
    const projectKey = await this.deps.store.projectKeyOf(trx, entry.projectId);
    // What leaves the instance is what a viewer may read: the hidden fields' values are redacted.
    const payload = payloadOf(event, entry, projectKey ?? entry.projectId, (changes) => redactChanges('viewer', changes));
    const now = nowIso(this.deps.clock);
    for (const webhook of webhooks) await this.deps.store.enqueue(trx, webhook.id, event, bodyOf(webhook.preset, payload), now);
  }
}

function eventsOf(events: WebhookEvent[] | undefined): WebhookEvent[] {
  if (events === undefined) return [...WEBHOOK_EVENTS];
  return WEBHOOK_EVENTS.filter((e) => events.includes(e));
}

function checkUrlForm(url: string): void {
  if (!isWebhookUrl(url)) throw AppError.validation([{ field: 'body.url', reason: 'must be an http or https URL without credentials' }], message('webhookUrl'));
}
