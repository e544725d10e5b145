import type { Actor, AuditLog } from '../audit/index.ts';
import type { Readable } from 'node:stream';
import type { Db } from '../db/database.ts';
import { type Cursor, type Page, pageOf } from '../db/paging.ts';
import { AppError, message } from '../errors.ts';
import type { DomainEvents } from '../events/index.ts';
import type { FileStorage, ObjectLocation } from '../files/index.ts';
import type { FormService, SpamChecks } from '../forms/index.ts';
import { conditionProblem } from '../targeting/index.ts';
import { nowIso } from '../db/codec.ts';
import { DUPLICATE_WINDOW_MINUTES, disposableReason, fingerprintOf, ruleContext, ruleReason } from './spam-checks.ts';
import type { OutboxService } from './outbox.service.ts';
import type { SpamReason, StoredFile, Submission } from './submission.ts';
import type { SubmissionIntakeService } from './submission-intake.service.ts';
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
  /** What a submission that is not spam gets delivered: marking one "not spam" queues what spam skipped. */
  intake: Pick<SubmissionIntakeService, 'deliveriesFor'>;
  clock: () => Date;
}

/** Submissions a spam rules' dry run looks at: the form's newest. */
export const DRY_RUN_SIZE = 1000;

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

  /**
   * Marks one submission as spam or not spam; answers it as `get` does. "Not spam" for a submission whose
   * deliveries spam skipped queues them now (issue 34); "spam" by hand is a reviewer's reason.
   */
  async markSpam(formKey: string, id: string, spam: boolean, actor: Actor) {
    const form = await this.deps.forms.get(formKey);
    let queued = 0;
    const delivered = (await this.deps.outbox.deliveriesOf(id)).length > 0;
    await this.deps.db.transaction().execute(async (trx) => {
      const before = await this.deps.store.find(trx, form.id, id);
      if (!before || !(await this.deps.store.setSpam(trx, form.id, id, spam))) throw new AppError('not_found', message('submissionNotFound', { id, formKey }));
      if (before.spam !== spam) {
        await this.deps.store.setSpamReasons(trx, form.id, id, spam ? [{ check: 'manual', detail: 'marked as spam by a reviewer' }] : []);
      }
      if (before.spam && !spam && !delivered) {
        const deliveries = this.deps.intake.deliveriesFor(form, before);
        queued = deliveries.length;
        await this.deps.outbox.enqueue(trx, before, deliveries, nowIso(this.deps.clock));
      }
      await this.deps.audit.record(trx, actor, {
        entity: 'submission',
        entityId: id,
        action: 'submission.updated',
        changes: { spam: { before: before.spam, after: spam } },
      });
    });
    // The outbox worker sends at once, as for a new submission.
    if (queued > 0) await this.deps.events.committed({ type: 'submission.stored', formId: form.id, submissionId: id, deliveries: queued });
    return this.get(formKey, id);
  }

  /**
   * What `checks` would have decided for the form's last DRY_RUN_SIZE submissions (issue 34), before they
   * are saved. Rules, disposable e-mails and duplicates are decided again from the stored fields; the
   * verdicts that need the request (fill time, proof of work), the honeypot's and a reviewer's are kept.
   */
  async dryRunSpamChecks(formKey: string, checks: SpamChecks) {
    const form = await this.deps.forms.get(formKey);
    const problems = (checks.rules ?? []).flatMap((condition, i) => {
      const why = conditionProblem(condition);
      return why ? [{ field: `body.spamChecks.rules.${i}`, reason: why.message }] : [];
    });
    if (problems.length > 0) throw AppError.validation(problems);
    const newest = await this.deps.store.newest(this.deps.db, form.id, DRY_RUN_SIZE);
    const window = (checks.duplicates?.windowMinutes ?? DUPLICATE_WINDOW_MINUTES) * 60_000;
    const lastSeen = new Map<string, number>();
    const kept = new Set(['honeypot', 'manual', ...(checks.minFillSeconds ? ['minFillTime'] : []), ...(checks.proofOfWork ? ['proofOfWork'] : [])]);
    const verdicts = new Map<string, SpamReason[]>();
    // Oldest first, so that a duplicate is the later of two.
    for (const s of [...newest].reverse()) {
      const fields = form.honeypot ? Object.fromEntries(Object.entries(s.data).filter(([name]) => name !== form.honeypot)) : s.data;
      const reasons = s.spamReasons.filter((r) => kept.has(r.check));
      const at = Date.parse(s.createdAt);
      const fingerprint = s.fingerprint ?? fingerprintOf(fields);
      const previous = lastSeen.get(fingerprint);
      if (checks.duplicates?.enabled && previous !== undefined && at - previous <= window)
        reasons.push({ check: 'duplicate', detail: `the same fields were submitted within ${window / 60_000} minutes` });
      lastSeen.set(fingerprint, at);
      const disposable = checks.disposableEmails ? disposableReason(fields) : undefined;
      if (disposable) reasons.push(disposable);
      const rule = checks.rules && checks.rules.length > 0 ? ruleReason(checks.rules, ruleContext(fields, s.meta)) : undefined;
      if (rule) reasons.push(rule);
      verdicts.set(s.id, reasons);
    }
    const changed = newest
      .filter((s) => verdicts.get(s.id)!.length > 0 !== s.spam)
      .map((s) => ({ id: s.id, createdAt: s.createdAt, spamBefore: s.spam, spamAfter: !s.spam, spamReasons: verdicts.get(s.id)! }));
    return { checked: newest.length, spam: [...verdicts.values()].filter((r) => r.length > 0).length, changed };
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
