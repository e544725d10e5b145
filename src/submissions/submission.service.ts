import type { Actor, AuditLog } from '../audit/index.ts';
import type { Readable } from 'node:stream';
import type { Db } from '../db/database.ts';
import { type Cursor, type Page, pageOf } from '../db/paging.ts';
import { AppError, message } from '../errors.ts';
import type { DomainEvents } from '../events/index.ts';
import type { FileStorage, ObjectLocation } from '../files/index.ts';
import type { FormService } from '../forms/index.ts';
import type { OutboxService } from '../outbox/index.ts';
import type { StoredFile, Submission } from './submission.ts';
import type { SubmissionFilter, SubmissionStore } from './submission.store.ts';

export interface SubmissionServiceDeps {
  db: Db;
  store: SubmissionStore;
  forms: FormService;
  outbox: OutboxService;
  /** Its form.deleting events make a deleted form's files go with it. */
  events: DomainEvents;
  /** Field data of one listing page, at most (JSON characters); a page always holds at least one submission. */
  listPageBytes: number;
  audit: Pick<AuditLog, 'record'>;
  files: FileStorage;
}

/** Submissions read from the database at once while a page is assembled. */
const LIST_BATCH = 20;

const cursorOf = (s: Submission): Cursor => ({ createdAt: s.createdAt, id: s.id });

/** The inbox of a form: its submissions read, marked and deleted. */
export class SubmissionService {
  constructor(private readonly deps: SubmissionServiceDeps) {
    // A deleted form takes its submissions and their file rows with it (foreign keys): their objects
    // are forgotten in the same transaction and deleted once it committed.
    deps.events.onTransaction('form.deleting', async (event, trx) => {
      await deps.files.forget(trx, await deps.store.objectsOfForm(trx, event.formId));
    });
    deps.events.onCommit('form.deleting', async () => {
      await deps.files.purgeDue();
    });
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
}
