import { newId, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { type Cursor, type Page, pageOf } from '../db/paging.ts';
import { AppError, message, messages } from '../errors.ts';
import type { DomainEvents } from '../events/index.ts';
import type { Form, FormService } from '../forms/index.ts';
import type { DeliveryInput, OutboxService } from '../outbox/index.ts';
import { csvRow } from './csv.ts';
import { applyHoneypot, type IncomingSubmission, notificationEmail, type StoredFile, type Submission, webhookBody } from './submission.ts';
import type { SubmissionFilter, SubmissionStore } from './submission.store.ts';
import { SubmissionWriter } from './submission-writer.ts';

export interface SubmissionServiceDeps {
  db: Db;
  store: SubmissionStore;
  forms: FormService;
  outbox: OutboxService;
  /** Announces submission.stored once a submission is committed (the outbox worker then delivers at once). */
  events: DomainEvents;
  /** False when SMTP_URL is not set: no e-mail is queued. */
  mailEnabled: boolean;
  publicUrl: string;
  clock: () => Date;
}

export class SubmissionService {
  private readonly writer: SubmissionWriter;

  constructor(private readonly deps: SubmissionServiceDeps) {
    this.writer = new SubmissionWriter(deps);
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
    await this.writer.write({ submission, formKey: form.key, files: incoming.files, deliveries });
    return submission;
  }

  /** A page of a form's submissions, newest first. */
  async list(formKey: string, page: { after: Cursor | undefined; limit: number }, filter: SubmissionFilter): Promise<Page<Submission>> {
    const form = await this.deps.forms.get(formKey);
    return pageOf(await this.deps.store.list(this.deps.db, form.id, page.limit, page.after, filter), page.limit);
  }

  /** Group commit's count of commits so far (see SubmissionWriter.commitCount). */
  get commitCount(): number {
    return this.writer.commitCount;
  }

  /** One submission with its deliveries and their attempts. */
  async get(formKey: string, id: string) {
    const form = await this.deps.forms.get(formKey);
    const submission = await this.deps.store.find(this.deps.db, form.id, id);
    if (!submission) throw new AppError('not_found', message('submissionNotFound', { id, formKey }));
    return { submission, deliveries: await this.deps.outbox.deliveriesOf(id) };
  }

  async getFile(formKey: string, id: string, fileId: string): Promise<{ file: StoredFile; content: Buffer }> {
    const { submission } = await this.get(formKey, id);
    const found = await this.deps.store.findFileContent(this.deps.db, submission.id, fileId);
    if (!found) throw new AppError('not_found', message('submissionFileNotFound', { fileId, id }));
    return found;
  }

  /** Deletes one submission with its files and deliveries. */
  async delete(formKey: string, id: string): Promise<void> {
    const form = await this.deps.forms.get(formKey);
    if (!(await this.deps.store.delete(this.deps.db, form.id, id))) throw new AppError('not_found', message('submissionNotFound', { id, formKey }));
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
    let after: Cursor | undefined;
    for (;;) {
      const { items, next } = pageOf(await this.deps.store.list(this.deps.db, formId, size, after, filter), size);
      if (items.length > 0) yield items;
      if (!next) return;
      after = next;
    }
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
