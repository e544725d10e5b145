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
