import type { RecordedAuditEntry } from '../events/index.ts';

/** The events a project webhook can subscribe to (issue 23); all of them when a webhook names none. */
export const WEBHOOK_EVENTS = [
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
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Chat services whose incoming webhooks take their own message body, unsigned, at a secret URL. */
export const WEBHOOK_PRESETS = ['slack', 'teams', 'discord'] as const;
export type WebhookPreset = (typeof WEBHOOK_PRESETS)[number];

export interface ProjectWebhook {
  id: string;
  projectId: string;
  url: string;
  events: WebhookEvent[];
  preset: WebhookPreset | null;
  createdAt: string;
  updatedAt: string;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDelivery {
  id: string;
  webhookId: string;
  seq: number;
  event: WebhookEvent;
  payload: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

/**
 * The webhook event an audit entry is, if any: flag writes keep their action; a change request's
 * creation opens it; an application that carries `scheduledAt` in its entry was the scheduler's.
 */
export function webhookEventOf(entry: Pick<RecordedAuditEntry, 'entity' | 'action' | 'changes'>): WebhookEvent | undefined {
  if (entry.entity === 'flag' && (entry.action === 'flag.created' || entry.action === 'flag.updated' || entry.action === 'flag.deleted')) return entry.action;
  if (entry.entity === 'release') return (WEBHOOK_EVENTS as readonly string[]).includes(entry.action) ? (entry.action as WebhookEvent) : undefined;
  if (entry.entity !== 'change_request') return undefined;
  if (entry.action === 'change_request.created') return 'change_request.opened';
  if (entry.action === 'change_request.approved') return 'change_request.approved';
  if (entry.action === 'change_request.applied') return 'scheduledAt' in entry.changes ? 'scheduled_change.applied' : 'change_request.applied';
  return undefined;
}

/** The JSON body of a signed webhook: the event and its audit entry (who, what, where, before and after). */
export interface WebhookPayload {
  type: WebhookEvent;
  timestamp: string;
  data: {
    auditEntryId: string;
    actor: RecordedAuditEntry['actor'];
    project: { key: string };
    environment: { key: string } | null;
    entity: string;
    entityId: string;
    action: string;
    changes: RecordedAuditEntry['changes'];
  };
}

export function payloadOf(
  event: WebhookEvent,
  entry: RecordedAuditEntry,
  projectKey: string,
  redact: (changes: RecordedAuditEntry['changes']) => RecordedAuditEntry['changes'],
): WebhookPayload {
  return {
    type: event,
    timestamp: entry.at,
    data: {
      auditEntryId: entry.id,
      actor: entry.actor,
      project: { key: projectKey },
      environment: entry.environmentKey === null ? null : { key: entry.environmentKey },
      entity: entry.entity,
      entityId: entry.entityId,
      action: entry.action,
      changes: redact(entry.changes),
    },
  };
}

/** Whether a URL may be a webhook's: http or https, absolute, no credentials in it. */
export function isWebhookUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}
