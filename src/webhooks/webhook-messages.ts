import type { WebhookPayload, WebhookPreset } from './webhook.ts';

// A flag-change event as a chat message for Slack, Microsoft Teams and Discord incoming webhooks, in each
// service's own format (the forms' chat messages are the model: src/submissions/chat-messages.ts). Values
// come from members, so they are escaped for the service's markup, cut to its limits, and mention nobody.

const cut = (value: string, max: number): string => (value.length > max ? `${value.slice(0, max - 1)}…` : value);
const show = (value: unknown): string => (value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value));
const slackEscape = (value: string): string => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const TITLES: Record<WebhookPayload['type'], string> = {
  'flag.created': 'Flag created',
  'flag.updated': 'Flag updated',
  'flag.deleted': 'Flag deleted',
  'change_request.opened': 'Change request opened',
  'change_request.approved': 'Change request approved',
  'change_request.applied': 'Change request applied',
  'scheduled_change.applied': 'Scheduled change applied',
  'release.started': 'Release started',
  'release.step_started': 'Release step started',
  'release.waiting_approval': 'Release waits for approval',
  'release.completed': 'Release completed',
  'release.rolled_back': 'Release rolled back',
};

/** The title line: what happened, to what, where, by whom. */
export function titleOf(p: WebhookPayload): string {
  const where = p.data.environment ? `${p.data.project.key}/${p.data.environment.key}` : p.data.project.key;
  return `${TITLES[p.type]}: ${p.data.entityId} in ${where} by ${p.data.actor.label}`;
}

/** One line per changed field, `field: before → after`. */
function changeLines(p: WebhookPayload): Array<{ field: string; text: string }> {
  return Object.entries(p.data.changes).map(([field, change]) => ({
    field,
    text: `${show(change.before)} → ${show(change.after)}`,
  }));
}

/** Slack: a header section and up to 10 fields (its limit per section). */
function slack(p: WebhookPayload): string {
  const title = slackEscape(titleOf(p));
  const fields = changeLines(p)
    .slice(0, 10)
    .map((c) => ({ type: 'mrkdwn', text: cut(`*${slackEscape(c.field)}*\n${slackEscape(c.text)}`, 2000) }));
  return JSON.stringify({
    text: title,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: `*${title}*` } }, ...(fields.length > 0 ? [{ type: 'section', fields }] : [])],
  });
}

/** Microsoft Teams (Workflows incoming webhook): one Adaptive Card with a fact set. */
function teams(p: WebhookPayload): string {
  const facts = changeLines(p)
    .slice(0, 25)
    .map((c) => ({ title: cut(c.field, 256), value: cut(c.text, 1024) }));
  return JSON.stringify({
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [{ type: 'TextBlock', text: cut(titleOf(p), 1000), weight: 'Bolder', wrap: true }, ...(facts.length > 0 ? [{ type: 'FactSet', facts }] : [])],
        },
      },
    ],
  });
}

/** Discord: one embed with up to 25 fields (256 per name, 1,024 per value), mentioning nobody. */
function discord(p: WebhookPayload): string {
  const fields = changeLines(p)
    .slice(0, 25)
    .map((c) => ({ name: cut(c.field, 256) || '(empty)', value: cut(c.text, 1024) || '(empty)' }));
  return JSON.stringify({ allowed_mentions: { parse: [] }, embeds: [{ title: cut(titleOf(p), 256), fields, timestamp: p.timestamp }] });
}

/** The request body for a webhook: the payload itself when signed, the chat service's message for a preset. */
export function bodyOf(preset: WebhookPreset | null, payload: WebhookPayload): string {
  if (preset === 'slack') return slack(payload);
  if (preset === 'teams') return teams(payload);
  if (preset === 'discord') return discord(payload);
  return JSON.stringify(payload);
}
