import type { Actor, AuditLog } from '../audit/index.ts';
import type { Readable } from 'node:stream';
import { newId, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { type Cursor, type Page, pageOf } from '../db/paging.ts';
import { AppError, message, messages } from '../errors.ts';
import type { DomainEvents } from '../events/index.ts';
import type { FileStorage, ObjectLocation, ReceivedFile } from '../files/index.ts';
import type { Form, FormService } from '../forms/index.ts';
import type { DeliveryInput } from './outbox.ts';
import type { OutboxService } from './outbox.service.ts';
import type { CaptchaVerifier } from './captcha.ts';
import { csvRow } from './csv.ts';
import { addressFingerprint, personMatcher } from './person-match.ts';
import { applyHoneypot, type IncomingSubmission, notificationEmail, type StoredFile, type Submission, webhookBody } from './submission.ts';
import { discordMessage, slackMessage } from './chat-messages.ts';
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
  /** Field data of one listing page, at most (JSON characters); a page always holds at least one submission. */
  listPageBytes: number;
  publicUrl: string;
  clock: () => Date;
  /** Verifies the CAPTCHA token of forms that ask for one (issue 12). */
  captcha: CaptchaVerifier;
  audit: Pick<AuditLog, 'record'>;
  /** Where file bytes go (issue 19): the database, a folder or an S3 bucket. */
  files: FileStorage;
}

/** Submissions read from the database at once while a page is assembled. */
const LIST_BATCH = 20;
/** Submissions one access or erasure request may match, at most (a larger set is a mistake, not a person). */
const PERSON_MAX = 10_000;
/** Field columns of the CSV export, at most; further fields go, as JSON, into one `otherFields` column. */
export const CSV_FIELD_COLUMNS = 100;

const cursorOf = (s: Submission): Cursor => ({ createdAt: s.createdAt, id: s.id });

export class SubmissionService {
  private readonly writer: SubmissionWriter;

  constructor(private readonly deps: SubmissionServiceDeps) {
    this.writer = new SubmissionWriter(deps);
    // A deleted form takes its submissions and their file rows with it (foreign keys): their objects
    // are forgotten in the same transaction and deleted once it committed.
    deps.events.onTransaction('form.deleting', async (event, trx) => {
      await deps.files.forget(trx, await deps.store.objectsOfForm(trx, event.formId));
    });
    deps.events.onCommit('form.deleting', async () => {
      await deps.files.purgeDue();
    });
  }

  /**
   * Stores an accepted submission, its files, its metadata and its deliveries in one transaction (contract
   * D18). Spam (D17) is stored but queues no delivery. No field and no file is a 400 (D13); an empty
   * honeypot does not count as a field.
   */
  async accept(form: Form, incoming: IncomingSubmission): Promise<Submission> {
    try {
      return await this.store(form, incoming);
    } catch (error) {
      // Refused or not committed: the files already stored go (now, or by the sweep).
      await this.deps.files.discard(incoming.files.map((f) => f.received));
      throw error;
    }
  }

  private async store(form: Form, incoming: IncomingSubmission): Promise<Submission> {
    if (form.captcha) {
      const refusal = await this.deps.captcha.check(form.captcha, incoming.data, incoming.meta.ip);
      if (refusal === 'missing') throw new AppError('validation', messages.formCaptchaMissing);
      if (refusal === 'failed') throw new AppError('forbidden', messages.formCaptchaFailed);
      if (refusal === 'unavailable') throw new AppError('unavailable', messages.formCaptchaUnavailable);
    }
    const { data, spam } = applyHoneypot(form, incoming.data);
    if (Object.keys(data).length === 0 && incoming.files.length === 0) throw new AppError('validation', messages.formEmpty);
    const files: StoredFile[] = incoming.files.map((f) => ({ id: f.id, field: f.field, name: f.name, size: f.received.size, contentType: f.contentType }));
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

  /**
   * Stores one uploaded file as its body is read, where FLAGPOST_FILE_STORAGE says (a store that is
   * away is a 503 with Retry-After); it becomes part of a submission through `accept`.
   */
  receiveFile(id: string, source: AsyncIterable<Buffer>, contentType: string): Promise<ReceivedFile> {
    return this.deps.files.receive(id, source, contentType);
  }

  /** Gives up received files of a body that failed before `accept`. */
  discardFiles(files: readonly ReceivedFile[]): Promise<void> {
    return this.deps.files.discard(files);
  }

  /** A page of a form's submissions, newest first. */
  async list(formKey: string, page: { after: Cursor | undefined; limit: number }, filter: SubmissionFilter): Promise<Page<Submission>> {
    const form = await this.deps.forms.get(formKey);
    // Read in small batches and stop at listPageBytes of data: a page of 200 submissions of a megabyte each
    // would otherwise be held whole in memory, twice (issue 8). The page then ends early, with a cursor.
    const items: Submission[] = [];
    let bytes = 0;
    let after = page.after;
    while (items.length < page.limit) {
      const batch = Math.min(LIST_BATCH, page.limit - items.length);
      const { items: rows, next } = pageOf(await this.deps.store.list(this.deps.db, form.id, batch, after, filter), batch);
      for (const row of rows) {
        const size = JSON.stringify(row.data).length;
        if (items.length > 0 && bytes + size > this.deps.listPageBytes) return { items, next: cursorOf(items[items.length - 1]!) };
        items.push(row);
        bytes += size;
      }
      if (!next) return { items, next: null };
      after = next;
    }
    // Full by count: is there more?
    const more = await this.deps.store.list(this.deps.db, form.id, 0, after, filter);
    return { items, next: more.length > 0 ? cursorOf(items[items.length - 1]!) : null };
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

  /** A file of a submission with its bytes: inline ones whole, objects as a stream from their store (503 while it is away). */
  async getFile(formKey: string, id: string, fileId: string): Promise<{ file: StoredFile; body: Buffer | Readable }> {
    const { submission } = await this.get(formKey, id);
    const found = await this.deps.store.findFile(this.deps.db, submission.id, fileId);
    if (!found) throw new AppError('not_found', message('submissionFileNotFound', { fileId, id }));
    return { file: found.file, body: await this.deps.files.open(found.location) };
  }

  /** Marks one submission as spam or not spam; answers it as `get` does. */
  async markSpam(formKey: string, id: string, spam: boolean, actor: Actor) {
    const form = await this.deps.forms.get(formKey);
    await this.deps.db.transaction().execute(async (trx) => {
      const before = await this.deps.store.find(trx, form.id, id);
      if (!before || !(await this.deps.store.setSpam(trx, form.id, id, spam))) throw new AppError('not_found', message('submissionNotFound', { id, formKey }));
      await this.deps.audit.record(trx, actor, {
        entity: 'submission',
        entityId: id,
        action: 'submission.updated',
        changes: { spam: { before: before.spam, after: spam } },
      });
    });
    return this.get(formKey, id);
  }

  /**
   * A person's submissions across every form (issue 12: access and erasure requests): those whose field
   * values hold the e-mail address as a whole address, compared case-folded (person-match.ts).
   */
  async ofPerson(email: string): Promise<Array<Submission & { form: { key: string; name: string } }>> {
    const matcher = personMatcher(email);
    const found: Submission[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await this.deps.store.findLike(this.deps.db, matcher.likePattern, 200, after);
      found.push(...page.filter((s) => matcher.holds(s.data)));
      if (found.length > PERSON_MAX) throw AppError.validation([{ field: 'body.email', reason: `matches more than ${PERSON_MAX} submissions` }]);
      if (page.length < 200) break;
      after = page[page.length - 1]!.id;
    }
    const forms = new Map((await this.deps.forms.list()).map((f) => [f.id, { key: f.key, name: f.name }]));
    return found
      .filter((s) => forms.has(s.formId))
      .map((s) => ({ ...s, form: forms.get(s.formId)! }))
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  /** An access request: a person's submissions (ofPerson), recorded in the audit log as answered. */
  async exportPerson(email: string, actor: Actor): Promise<Array<Submission & { form: { key: string; name: string } }>> {
    const found = await this.ofPerson(email);
    await this.deps.audit.record(this.deps.db, actor, {
      entity: 'personal_data',
      entityId: addressFingerprint(email),
      action: 'personal_data.exported',
      changes: { submissions: { after: found.map((s) => s.id) } },
    });
    return found;
  }

  /** Deletes a person's submissions across every form, with their files and deliveries; returns their ids. */
  async erasePerson(email: string, actor: Actor): Promise<string[]> {
    const ids = (await this.ofPerson(email)).map((s) => s.id);
    let objects: ObjectLocation[] = [];
    // The log outlives the erasure: it keeps the address's fingerprint, not the address (ADR 0023).
    await this.deps.db.transaction().execute(async (trx) => {
      objects = await this.deps.store.objectsOf(trx, ids);
      await this.deps.files.forget(trx, objects);
      await this.deps.store.deleteMany(trx, ids);
      await this.deps.audit.record(trx, actor, {
        entity: 'personal_data',
        entityId: addressFingerprint(email),
        action: 'personal_data.erased',
        changes: { submissions: { before: ids } },
      });
    });
    await this.deps.files.purge(objects);
    return ids;
  }

  /** How many submissions (all, and spam) each of these forms has. */
  async countsOf(formIds: readonly string[]): Promise<Map<string, { total: number; spam: number }>> {
    return this.deps.store.countsOf(this.deps.db, formIds);
  }

  /** Deletes one submission with its files and deliveries. */
  async delete(formKey: string, id: string, actor: Actor): Promise<void> {
    const form = await this.deps.forms.get(formKey);
    let objects: ObjectLocation[] = [];
    await this.deps.db.transaction().execute(async (trx) => {
      objects = await this.deps.store.objectsOf(trx, [id]);
      await this.deps.files.forget(trx, objects);
      if (!(await this.deps.store.delete(trx, form.id, id))) throw new AppError('not_found', message('submissionNotFound', { id, formKey }));
      await this.deps.audit.record(trx, actor, { entity: 'submission', entityId: id, action: 'submission.deleted', changes: { form: { before: formKey } } });
    });
    await this.deps.files.purge(objects);
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
      // At most CSV_FIELD_COLUMNS columns: distinct names times rows would make a CSV quadratic in
      // the number of names (issue 8); the rest of a row's fields go into `otherFields` as JSON.
      const fields = new Set<string>();
      let overflow = false;
      for await (const page of pages()) {
        for (const s of page) {
          for (const name of Object.keys(s.data)) {
            if (fields.size < CSV_FIELD_COLUMNS) fields.add(name);
            else if (!fields.has(name)) overflow = true;
          }
        }
      }
      const columns = [...fields];
      yield csvRow(['id', 'createdAt', 'spam', ...columns, ...(overflow ? ['otherFields'] : []), 'files']);
      for await (const page of pages()) {
        let chunk = '';
        for (const s of page) {
          // Own fields only: a field named "toString" must not read Object.prototype.toString.
          const cells = columns.map((name) => (Object.hasOwn(s.data, name) ? s.data[name] : undefined));
          const other = overflow ? [Object.fromEntries(Object.entries(s.data).filter(([name]) => !fields.has(name)))] : [];
          const otherCell = other.length > 0 && Object.keys(other[0]!).length === 0 ? [''] : other;
          chunk += csvRow([s.id, s.createdAt, String(s.spam), ...cells, ...otherCell, s.files.map((f) => `${f.field}: ${f.name}`).join('; ')]);
        }
        yield chunk;
      }
    })();
  }

  /**
   * Every submission of a form as one JSON array, newest first, written page by page (issue 12): each
   * with its fields, request metadata and files (described; their bytes stay behind the file route).
   */
  async exportJson(formKey: string, filter: SubmissionFilter): Promise<AsyncIterable<string>> {
    const form = await this.deps.forms.get(formKey);
    const pages = this.pages.bind(this, form.id, filter);
    return (async function* () {
      let first = true;
      yield '[';
      for await (const page of pages()) {
        let chunk = '';
        for (const s of page) {
          chunk += `${first ? '\n' : ',\n'}${JSON.stringify({ id: s.id, createdAt: s.createdAt, spam: s.spam, data: s.data, files: s.files, meta: s.meta })}`;
          first = false;
        }
        yield chunk;
      }
      yield first ? ']\n' : '\n]\n';
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
    // Chat messages link to the submission in the dashboard.
    const dashboardUrl = `${this.deps.publicUrl}/forms/${form.key}/submissions/${submission.id}`;
    if (form.slackWebhookUrl) items.push({ kind: 'slack', target: form.slackWebhookUrl, payload: slackMessage(form, submission, dashboardUrl) });
    if (form.discordWebhookUrl) items.push({ kind: 'discord', target: form.discordWebhookUrl, payload: discordMessage(form, submission, dashboardUrl) });
    if (this.deps.mailEnabled && form.notifyEmails.length > 0) {
      const adminUrl = `${this.deps.publicUrl}/admin/v1/forms/${form.key}/submissions/${submission.id}`;
      const payload = JSON.stringify(notificationEmail(form, submission, adminUrl));
      for (const to of form.notifyEmails) items.push({ kind: 'email', target: to, payload });
    }
    return items;
  }
}
