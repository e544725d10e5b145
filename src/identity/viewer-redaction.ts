import type { Actor, Role } from './actor.ts';

/** What a hidden value shows as. */
export const REDACTED = '[redacted]';

/**
 * Settings that are credentials, hidden from viewers wherever they appear (issue 13; issue 20 item 6):
 * Slack and Discord incoming-webhook URLs are keys by design, and a generic webhook URL often carries a
 * token in its path or query. Editors and owners, who may change them, see them.
 */
export const VIEWER_HIDDEN_FIELDS = ['webhookUrl', 'slackWebhookUrl', 'discordWebhookUrl'] as const;
/** Delivery kinds whose target is one of those URLs. */
const URL_DELIVERY_KINDS = new Set(['webhook', 'slack', 'discord']);

const hides = (role: Role) => role === 'viewer' || role === 'none';

/** An object (a form) with the hidden fields' values replaced for a viewer; null stays null. */
export function redactFields<T extends object>(role: Role, value: T): T {
  if (!hides(role)) return value;
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const field of VIEWER_HIDDEN_FIELDS) if (copy[field]) copy[field] = REDACTED;
  // A form's further webhooks (issue 34): their URLs as hidden as the first one's, their conditions shown.
  if (Array.isArray(copy.webhooks)) copy.webhooks = redactWebhookList(copy.webhooks);
  return copy as T;
}

/** A delivery with its target hidden from a viewer when the target is a webhook URL. */
export function redactDelivery<T extends { kind: string; target: string }>(role: Role, delivery: T): T {
  return hides(role) && URL_DELIVERY_KINDS.has(delivery.kind) ? { ...delivery, target: REDACTED } : delivery;
}

const redactWebhookList = (list: unknown[]): unknown[] => list.map((hook) => (hook && typeof hook === 'object' ? { ...hook, url: REDACTED } : hook));

/** An audit entry's `changes` with the hidden fields' values replaced for a viewer. */
export function redactChanges(role: Role, changes: Record<string, { before?: unknown; after?: unknown }>): typeof changes {
  if (!hides(role)) return changes;
  const copy = { ...changes };
  for (const field of VIEWER_HIDDEN_FIELDS) {
    const change = copy[field];
    if (!change) continue;
    const hidden: { before?: unknown; after?: unknown } = {};
    if ('before' in change) hidden.before = change.before ? REDACTED : change.before;
    if ('after' in change) hidden.after = change.after ? REDACTED : change.after;
    copy[field] = hidden;
  }
  const hooks = copy.webhooks;
  if (hooks) {
    copy.webhooks = {
      ...(Array.isArray(hooks.before) ? { before: redactWebhookList(hooks.before) } : 'before' in hooks ? { before: hooks.before } : {}),
      ...(Array.isArray(hooks.after) ? { after: redactWebhookList(hooks.after) } : 'after' in hooks ? { after: hooks.after } : {}),
    };
  }
  return copy;
}

/**
 * An audit entry's actor as a viewer sees it (issue 20 item 8, ADR 0023): a member's label is their
 * e-mail address (and an access token's name), which the member list shows to owners only; a viewer
 * gets a label that names the kind of actor, and the user id, which groups one member's entries.
 */
export function redactActor(role: Role, actor: Actor): Actor {
  if (!hides(role) || actor.type === 'admin_token') return actor;
  return { ...actor, label: actor.type === 'user' ? 'a member' : "a member's access token" };
}
