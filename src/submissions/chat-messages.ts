import type { Form } from '../forms/index.ts';
import type { Submission } from './submission.ts';

// The chat messages of a submission for Slack and Discord incoming webhooks (issue 12), in each
// service's own format. Field text comes from anyone who can post to the form, so it is escaped for the
// service's markup, cut to the service's limits, and can mention nobody.

const text = (value: unknown): string => (typeof value === 'string' ? value : Array.isArray(value) ? value.map(String).join(', ') : JSON.stringify(value));
const cut = (value: string, max: number): string => (value.length > max ? `${value.slice(0, max - 1)}…` : value);

/** Slack mrkdwn: &, < and > are its control characters (links, mentions). */
const slackEscape = (value: string): string => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Slack: a header line and up to 10 fields (its limit per section), with a link to the submission. */
export function slackMessage(form: Pick<Form, 'key' | 'name'>, s: Submission, adminUrl: string): string {
  const entries = Object.entries(s.data);
  const fields = entries.slice(0, 10).map(([name, value]) => ({ type: 'mrkdwn', text: cut(`*${slackEscape(name)}*\n${slackEscape(text(value))}`, 2000) }));
  const more = entries.length > 10 ? ` (${entries.length - 10} more fields)` : '';
  const files = s.files.length > 0 ? `, ${s.files.length} file${s.files.length === 1 ? '' : 's'}` : '';
  const title = `New submission to ${slackEscape(form.name)}`;
  return JSON.stringify({
    text: title,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${title}*` } },
      ...(fields.length > 0 ? [{ type: 'section', fields }] : []),
      { type: 'context', elements: [{ type: 'mrkdwn', text: `<${adminUrl}|Open in Flagpost>${more}${files}` }] },
    ],
  });
}

/** Discord: one embed with up to 25 fields (its limits: 256 per name, 1,024 per value), mentioning nobody. */
export function discordMessage(form: Pick<Form, 'key' | 'name'>, s: Submission, adminUrl: string): string {
  const entries = Object.entries(s.data);
  const fields = entries.slice(0, 25).map(([name, value]) => ({ name: cut(name, 256) || '(empty)', value: cut(text(value), 1024) || '(empty)' }));
  const notes = [
    entries.length > 25 ? `${entries.length - 25} more fields` : '',
    s.files.length > 0 ? `${s.files.length} file${s.files.length === 1 ? '' : 's'}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return JSON.stringify({
    content: cut(`New submission to ${form.name}`, 2000),
    embeds: [{ title: cut(form.name, 256), url: adminUrl, fields, timestamp: s.createdAt, ...(notes ? { footer: { text: notes } } : {}) }],
    allowed_mentions: { parse: [] },
  });
}
