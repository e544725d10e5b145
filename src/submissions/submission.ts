import type { ReceivedFile } from '../files/index.ts';
import type { Form } from '../forms/index.ts';

/** Request metadata kept with every submission (contract D18). */
export interface SubmissionMeta {
  ip: string | null;
  userAgent: string | null;
  referer: string | null;
  origin: string | null;
  /** A Formspree client's `webdriver` flag (issue 34): recorded, never a verdict by itself; null: not told. */
  webdriver?: boolean | null;
}

/** A file as it arrived, read completely within the limits of contract D16, and where its bytes went. */
export interface IncomingFile {
  id: string;
  field: string;
  name: string;
  contentType: string;
  received: ReceivedFile;
}

export interface IncomingSubmission {
  /** Field name to value; repeated text fields hold an array of every value (contract D13). */
  data: Record<string, unknown>;
  files: IncomingFile[];
  meta: SubmissionMeta;
  /** When the page was loaded (ms since the epoch) as a Formspree client said (Formspree-Session-Data): the fill-time check's start. */
  loadedAt?: number;
  /** The ALTCHA proof of work of a form that asks for one (proof-of-work.ts), checked by the intake route. */
  proofOfWork?: { ok: true; signature: string; expiresAt: number } | { ok: false; why: 'missing' | 'failed' };
}

export interface StoredFile {
  id: string;
  field: string;
  name: string;
  size: number;
  contentType: string;
}

export interface Submission {
  id: string;
  formId: string;
  data: Record<string, unknown>;
  files: StoredFile[];
  spam: boolean;
  /** Why it is spam (issue 34): one entry per check that said so; empty for a submission that is not spam. */
  spamReasons: SpamReason[];
  /** Hash of the normalised fields, for the duplicate check; null when not computed. */
  fingerprint?: string | null;
  meta: SubmissionMeta;
  createdAt: string;
}

/** One reason of a spam verdict: the check (`honeypot`, `duplicate`, `minFillTime`, `disposableEmail`, `rule`) and what it saw. */
export interface SpamReason {
  check: string;
  detail: string;
}

/** Collects text fields in arrival order; a repeated name keeps every value as an array (contract D13). */
export class FieldCollector {
  private readonly values = new Map<string, unknown[]>();

  add(name: string, value: unknown): void {
    const list = this.values.get(name);
    if (list) list.push(value);
    else this.values.set(name, [value]);
  }

  /** Own properties only, so a field named `__proto__` is plain data. */
  toObject(): Record<string, unknown> {
    return Object.fromEntries([...this.values].map(([name, list]) => [name, list.length === 1 ? list[0] : list]));
  }
}

/** A filled honeypot: any value other than empty text, null or an empty list (contract D17). */
export function isFilled(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string') return value.trim() !== '';
  if (Array.isArray(value)) return value.some(isFilled);
  return true;
}

/**
 * Separates the honeypot from the data: a filled honeypot marks the submission as spam and stays in its
 * data (for review); an empty one is dropped, so it never counts as a field.
 */
export function applyHoneypot(form: Pick<Form, 'honeypot'>, data: Record<string, unknown>): { data: Record<string, unknown>; spam: boolean } {
  if (!form.honeypot || !Object.hasOwn(data, form.honeypot)) return { data, spam: false };
  if (isFilled(data[form.honeypot])) return { data, spam: true };
  const rest = { ...data };
  delete rest[form.honeypot];
  return { data: rest, spam: false };
}

export const fileView = (f: StoredFile) => ({ id: f.id, field: f.field, name: f.name, size: f.size, contentType: f.contentType });

export const submissionView = (s: Submission) => ({
  id: s.id,
  data: s.data,
  files: s.files.map(fileView),
  spam: s.spam,
  spamReasons: s.spamReasons,
  createdAt: s.createdAt,
});

/** The webhook body: `{formId, name, data}` of the original service, plus the rest of the submission. */
export function webhookBody(form: Pick<Form, 'key' | 'name'>, s: Submission): string {
  return JSON.stringify({
    formId: form.key,
    name: form.name,
    data: s.data,
    submissionId: s.id,
    files: s.files.map(fileView),
    createdAt: s.createdAt,
  });
}

/** Line breaks, and the other controls that could start a new line or hide text in a mail client. */
const LINE_BREAKS = /\r\n|[\r\n\v\f\u0085\u2028\u2029]/g;
// eslint-disable-next-line no-control-regex -- these control characters are what it removes
const CONTROLS = /[\u0000-\u0008\u000e-\u001f\u007f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Text on one line: breaks become spaces, controls go. */
const oneLine = (text: string): string => text.replace(LINE_BREAKS, ' ').replace(CONTROLS, '');

/**
 * A field's value, whose second and later lines are indented by four spaces: every line at the margin
 * is Flagpost's, so a value cannot imitate another field or the footer (issue 8).
 */
const indented = (text: string): string => text.replace(CONTROLS, '').split(LINE_BREAKS).join('\n    ');

/** The notification e-mail of one submission, as plain text. */
export function notificationEmail(form: Pick<Form, 'key' | 'name'>, s: Submission, adminUrl: string): { subject: string; text: string } {
  const lines = [`New submission to the form "${oneLine(form.name)}" (${form.key}) at ${s.createdAt}.`, ''];
  for (const [name, value] of Object.entries(s.data)) {
    lines.push(`${oneLine(name)}: ${indented(typeof value === 'string' ? value : JSON.stringify(value))}`);
  }
  if (s.files.length > 0) {
    lines.push('', 'Files:');
    for (const f of s.files) lines.push(`  ${oneLine(f.field)}: ${oneLine(f.name)} (${oneLine(f.contentType)}, ${f.size} bytes)`);
  }
  lines.push('', `Submission ${s.id}: ${adminUrl}`);
  return { subject: `New submission: ${oneLine(form.name)}`, text: lines.join('\n') };
}
