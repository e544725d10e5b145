import { newId, nowIso } from '../db/codec.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';
import type { Db } from '../db/database.ts';
import { AppError, message, messages } from '../errors.ts';
import type { DeliveryInput, OutboxStore } from '../outbox/index.ts';
import { csvRow } from './csv.ts';
import type { Form } from './form.ts';
import type { FormService } from './form.service.ts';
import { applyHoneypot, type IncomingSubmission, notificationEmail, type StoredFile, type Submission, webhookBody } from './submission.ts';
import type { SubmissionFilter, SubmissionStore } from './submission.store.ts';
import { SubmissionWriter } from './submission-writer.ts';

export interface SubmissionServiceDeps {
  db: Db;
  store: SubmissionStore;
  forms: FormService;
  outbox: OutboxStore;
  /** False when SMTP_URL is not set: no e-mail is queued. */
  mailEnabled: boolean;
  publicUrl: string;
  /** Called after a submission with deliveries was committed, to deliver without waiting for the next poll. */
  onQueued: () => void;
  clock?: () => Date;
}

export class SubmissionService {
  private readonly writer: SubmissionWriter;

  constructor(private readonly deps: SubmissionServiceDeps) {
    this.writer = new SubmissionWriter(deps.db, deps.store, deps.outbox);
  }

  /**
   * Stores an accepted submission, its files, its metadata and its deliveries in one transaction (contract
   * D18). Spam (D17) is stored but queues no delivery. No field and no file is a 400 (D13); an empty
   * honeypot does not count as a field.
   */
  async accept(form: Form, incoming: IncomingSubmission): Promise<Submission> {
    const { data, spam } = applyHoneypot(form, incoming.data);
    if (Object.keys(data).length === 0 && incoming.files.length === 0) throw new AppError('validation', messages.formEmpty);
    const files: StoredFile[] = incoming.files.map((f) => ({ id: newId(), field: f.field, name: f.name, size: f.content.length, contentType: f.contentType }));
    const submission: Submission = {
      id: newId(),
      formId: form.id,
      data,
      files,
      spam,
      meta: incoming.meta,
      createdAt: nowIso(this.deps.clock),
    };
    const deliveries = spam ? [] : this.deliveriesFor(form, submission);
    await this.writer.write({ submission, files: incoming.files, deliveries });
    if (deliveries.length > 0) this.deps.onQueued();
    return submission;
  }

  /** A page of a form's submissions, newest first. */
  async list(formKey: string, page: { cursor?: string; limit: number } & SubmissionFilter): Promise<{ submissions: Submission[]; nextCursor: string | null }> {
    const after = decodeCursor(page.cursor);
    const form = await this.deps.forms.get(formKey);
    const rows = await this.deps.store.list(form.id, page.limit + 1, after, { spam: page.spam });
    const submissions = rows.slice(0, page.limit);
    const last = submissions[submissions.length - 1];
    return { submissions, nextCursor: rows.length > page.limit && last ? encodeCursor(last) : null };
  }

  /** One submission with its deliveries and their attempts. */
  async get(formKey: string, id: string) {
    const form = await this.deps.forms.get(formKey);
    const submission = await this.deps.store.find(form.id, id);
    if (!submission) throw new AppError('not_found', message('submissionNotFound', { id, formKey }));
    return { submission, deliveries: await this.deps.outbox.listForSubmission(id) };
  }

  async getFile(formKey: string, id: string, fileId: string): Promise<{ file: StoredFile; content: Buffer }> {
    const { submission } = await this.get(formKey, id);
    const found = await this.deps.store.findFileContent(submission.id, fileId);
    if (!found) throw new AppError('not_found', message('submissionFileNotFound', { fileId, id }));
    return found;
  }

  /** Deletes one submission with its files and deliveries. */
  async delete(formKey: string, id: string): Promise<void> {
    const form = await this.deps.forms.get(formKey);
    if (!(await this.deps.store.delete(form.id, id))) throw new AppError('not_found', message('submissionNotFound', { id, formKey }));
  }

  /**
   * Every submission of a form as CSV, newest first: id, createdAt, spam, one column per field name (in
   * order of first appearance) and the file names. Cells are safe against formula injection.
   */
  async exportCsv(formKey: string, filter: SubmissionFilter): Promise<AsyncIterable<string>> {
    const form = await this.deps.forms.get(formKey);
    const pages = this.pages.bind(this, form.id, filter);
    // Two passes, page by page, so that memory holds one page and not the whole export: the first
    // collects the column names, the second writes the rows.
    return (async function* () {
      const fields = new Set<string>();
      for await (const page of pages()) for (const s of page) for (const name of Object.keys(s.data)) fields.add(name);
      const columns = [...fields];
      yield csvRow(['id', 'createdAt', 'spam', ...columns, 'files']);
      for await (const page of pages()) {
        let chunk = '';
        for (const s of page) {
          // Own fields only: a field named "constructor" must not read Object.prototype.constructor.
          const cells = columns.map((name) => (Object.hasOwn(s.data, name) ? s.data[name] : undefined));
          chunk += csvRow([s.id, s.createdAt, String(s.spam), ...cells, s.files.map((f) => `${f.field}: ${f.name}`).join('; ')]);
        }
        yield chunk;
      }
    })();
  }

  private async *pages(formId: string, filter: SubmissionFilter): AsyncGenerator<Submission[]> {
    const size = 100;
    let after: Submission | undefined;
    for (;;) {
      const page = await this.deps.store.list(formId, size, after, filter);
      if (page.length > 0) yield page;
      if (page.length < size) return;
      after = page[page.length - 1];
    }
  }

  /** The current webhook secret of the form behind a submission (for the outbox worker). */
  webhookSecretOf(submissionId: string): Promise<string | null> {
    return this.deps.store.webhookSecretOf(submissionId);
  }

  private deliveriesFor(form: Form, submission: Submission): DeliveryInput[] {
    const items: DeliveryInput[] = [];
    if (form.webhookUrl) items.push({ kind: 'webhook', target: form.webhookUrl, payload: webhookBody(form, submission) });
    if (this.deps.mailEnabled && form.notifyEmails.length > 0) {
      const adminUrl = `${this.deps.publicUrl}/admin/v1/forms/${form.key}/submissions/${submission.id}`;
      const payload = JSON.stringify(notificationEmail(form, submission, adminUrl));
      for (const to of form.notifyEmails) items.push({ kind: 'email', target: to, payload });
    }
    return items;
  }
}
