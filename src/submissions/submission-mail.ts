import { convert } from 'html-to-text';
import { type Form, oneLine, renderHtml, renderLine, submitterAddress, templateVariables } from '../forms/index.ts';
import type { Submission } from './submission.ts';

// The e-mails of a submission (issue 34, docs/adr/0048-form-mail-templates-and-deliveries.md): the
// notification to the form's addresses and the auto-response to the submitter. Each is an HTML part
// from a Liquid template (every value escaped) and a text part made from that HTML by html-to-text; the
// outbox stores the finished message, so a retry or a re-send sends what was rendered at submission time.

/** An e-mail as the outbox stores it (the delivery's payload, as JSON); the recipient is its target. */
export interface MailPayload {
  subject: string;
  text: string;
  html?: string;
  /** Display name of the sender; the address stays FLAGPOST_MAIL_FROM's. */
  fromName?: string;
  replyTo?: string;
  cc?: string[];
  bcc?: string[];
}

const LINE_BREAKS = /\r\n|[\r\n\v\f\u0085\u2028\u2029]/g;
// eslint-disable-next-line no-control-regex -- these control characters are what it removes
const CONTROLS = /[\u0000-\u0008\u000e-\u001f\u007f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A value as shown in a message: line breaks as `\n`, no hidden controls. */
const shown = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value)).replace(LINE_BREAKS, '\n').replace(CONTROLS, '');

export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

// The submission as a table; names on one line, values' line breaks as <br>: in the text part a value's
// further lines are indented under it, so no value can imitate another field or the link (issue 8).
const SUBMISSION_TABLE = `<table cellpadding="6" cellspacing="0" style="border-collapse:collapse">
{%- for f in fields %}
<tr><th align="left" valign="top" style="border-bottom:1px solid #ddd">{{ f.name }}</th><td valign="top" style="border-bottom:1px solid #ddd">{{ f.value | escape | newline_to_br | raw }}</td></tr>
{%- endfor %}
</table>
{%- if files.size > 0 %}
<p>Files:</p>
<ul>{% for f in files %}<li>{{ f.field }}: {{ f.name }} ({{ f.size }})</li>{% endfor %}</ul>
{%- endif %}`;

const NOTIFICATION = `<!doctype html>
<html><body style="font-family:system-ui,sans-serif;font-size:14px">
<p>New submission to the form <strong>{{ formName }}</strong> ({{ formKey }}) at {{ createdAt }}.</p>
${SUBMISSION_TABLE}
<p><a href="{{ link }}">Open submission {{ id }} in the dashboard</a></p>
</body></html>`;

const AUTO_RESPONSE = `<!doctype html>
<html><body style="font-family:system-ui,sans-serif;font-size:14px">
{{ body | raw }}
{%- if includeSubmission %}
<hr>
${SUBMISSION_TABLE}
{%- endif %}
</body></html>`;

function tableVariables(s: Submission) {
  return {
    fields: Object.entries(s.data).map(([name, value]) => ({ name: oneLine(name), value: shown(value) })),
    files: s.files.map((f) => ({ field: oneLine(f.field), name: oneLine(f.name), size: humanSize(f.size) })),
  };
}

/** The text part of an HTML e-mail: tables as aligned columns, links as `text [url]`. */
export function textOf(html: string): string {
  return convert(html, {
    wordwrap: 100,
    selectors: [
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 80 } },
      { selector: 'hr', format: 'horizontalLine', options: { length: 20 } },
    ],
  });
}

/** The notification of one submission; `link` opens it in the dashboard. */
export function notificationMail(form: Pick<Form, 'key' | 'name' | 'notifications'>, s: Submission, link: string): MailPayload {
  const settings = form.notifications ?? {};
  const variables = templateVariables(s.data);
  const fallbackSubject = `New submission: ${oneLine(form.name)}`;
  const html =
    renderHtml(NOTIFICATION, { formName: oneLine(form.name), formKey: form.key, createdAt: s.createdAt, id: s.id, link, ...tableVariables(s) }) ??
    `<p>New submission ${s.id}</p>`;
  const payload: MailPayload = {
    subject: settings.subject ? renderLine(settings.subject, variables, fallbackSubject) : fallbackSubject,
    text: textOf(html),
    html,
  };
  if (settings.fromName) {
    const name = renderLine(settings.fromName, variables, '', 100);
    if (name) payload.fromName = name;
  }
  const replyTo = submitterAddress(s.data, settings.replyToField);
  if (replyTo) payload.replyTo = replyTo;
  return payload;
}

/**
 * The auto-response to the submitter, or undefined when the form sends none or the submission holds no
 * single valid address: `to` is where it goes.
 */
export function autoResponseMail(form: Pick<Form, 'autoResponse'>, s: Submission): { to: string; mail: MailPayload } | undefined {
  const settings = form.autoResponse;
  if (!settings?.enabled) return undefined;
  const to = submitterAddress(s.data, settings.toField);
  if (!to) return undefined;
  const variables = templateVariables(s.data);
  const body = renderHtml(settings.body, variables) ?? '';
  const html = renderHtml(AUTO_RESPONSE, { body, includeSubmission: settings.includeSubmission === true, ...tableVariables(s) }) ?? body;
  const mail: MailPayload = { subject: renderLine(settings.subject, variables, 'Thank you'), text: textOf(html), html };
  if (settings.fromName) {
    const name = renderLine(settings.fromName, variables, '', 100);
    if (name) mail.fromName = name;
  }
  if (settings.replyTo) mail.replyTo = settings.replyTo;
  return { to, mail };
}
