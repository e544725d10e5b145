import { setImmediate as yieldToRequests } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db, Dialect, Executor } from '../db/database.ts';
import type { FileStorage, ObjectLocation } from '../files/index.ts';
import type { OutageLog } from '../db/outage.ts';
import type { FormService } from '../forms/index.ts';
import { RATE_WINDOW_SECONDS } from './spam-checks.ts';
import type { SubmissionStore } from './submission.store.ts';

// The retention job (issue 12, docs/adr/0016-retention.md): submissions older than their form's
// `retentionDays` go with their files and delivery records, and, where a form asks for it, files go once
// all of a submission's deliveries succeeded. Work is done in batches, each its own short transaction,
// with a turn of the event loop between batches, so requests never wait behind it. The scheduler runs a
// round every FLAGPOST_RETENTION_INTERVAL_MS in one process of all instances: on PostgreSQL each round
// holds the job's named lock (db/named-lock.ts), so one instance deletes and prunes at a time, and an
// instance that finds the lock taken leaves that round to the other (src/compose/jobs.ts). Files in an object store (issue 19) are
// forgotten in their batch's transaction and deleted after it; each round ends with the file sweep
// (FileStorage.sweep: abandoned uploads, deletions not done yet, objects nothing references).

export interface RetentionDeps {
  db: Db;
  dialect: Dialect;
  store: SubmissionStore;
  forms: FormService;
  files: FileStorage;
  clock: () => Date;
  log: OutageLog;
  /** Submissions per batch. */
  batch?: number;
  /** Other retention settings pruned at the end of each round (the audit log's); each answers how many rows went. */
  alsoPrune?: Array<() => Promise<number>>;
}

export interface RetentionRound {
  /** Submissions deleted for being older than their form's retention. */
  deleted: number;
  /** Submissions whose files were deleted after delivery. */
  filesDeleted: number;
  batches: number;
  /** Objects the file sweep deleted: of deleted files and abandoned uploads, and unreferenced ones. */
  objectsDeleted: number;
  orphansDeleted: number;
}

export class RetentionJob {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly batch: number;

  constructor(private readonly deps: RetentionDeps) {
    this.batch = deps.batch ?? 500;
  }

  /**
   * One round over every form with a retention or file rule; rounds of this process never overlap. An
   * aborted `signal` (shutdown) ends the round after the batch in flight.
   */
  runOnce(signal?: AbortSignal): Promise<RetentionRound> {
    const run = this.chain.then(() => this.round(signal));
    this.chain = run.catch(() => {});
    return run;
  }

  private async round(signal: AbortSignal | undefined): Promise<RetentionRound> {
    const result: RetentionRound = { deleted: 0, filesDeleted: 0, batches: 0, objectsDeleted: 0, orphansDeleted: 0 };
    const forms = (await this.deps.forms.list()).filter((f) => f.retentionDays !== null || f.deleteFilesAfterDelivery);
    for (const form of forms) {
      if (form.retentionDays !== null) {
        const cutoff = new Date(this.deps.clock().getTime() - form.retentionDays * 86_400_000).toISOString();
        for (;;) {
          const n = await this.batchOf(async (trx) => {
            const ids = await this.deps.store.idsOlderThan(trx, form.id, cutoff, this.batch);
            const objects = await this.forget(trx, ids);
            await this.deps.store.deleteMany(trx, ids);
            return { n: ids.length, objects };
          });
          result.batches++;
          result.deleted += n;
          if (n < this.batch || signal?.aborted) break;
          await yieldToRequests();
        }
      }
      if (form.deleteFilesAfterDelivery) {
        for (;;) {
          const n = await this.batchOf(async (trx) => {
            const ids = await this.deps.store.idsWithDeliveredFiles(trx, form.id, this.batch);
            const objects = await this.forget(trx, ids);
            await this.deps.store.deleteFilesOf(trx, ids);
            return { n: ids.length, objects };
          });
          result.batches++;
          result.filesDeleted += n;
          if (n < this.batch || signal?.aborted) break;
          await yieldToRequests();
        }
      }
    }
    // The rate limit's counts of seconds its window has left behind.
    let pruned = await this.deps.store.pruneRateCounts(this.deps.db, Math.floor(this.deps.clock().getTime() / 1000) - RATE_WINDOW_SECONDS);
    for (const prune of this.deps.alsoPrune ?? []) pruned += await prune();
    try {
      const swept = await this.deps.files.sweep((keys) => this.deps.store.referencedKeys(this.deps.db, keys));
      result.objectsDeleted = swept.deleted;
      result.orphansDeleted = swept.orphans;
    } catch (error) {
      // A file store that is away: its objects wait for the next round; the retention work above is done.
      this.deps.log.warn({ err: error }, 'file sweep not finished; the next round retries');
    }
    if (result.deleted + result.filesDeleted + pruned > 0 && this.deps.dialect === 'sqlite') {
      // Give the freed pages back to the file system (auto_vacuum = INCREMENTAL; see connect.ts).
      await sql`pragma incremental_vacuum`.execute(this.deps.db);
    }
    return result;
  }

  /** One batch in its own transaction; the objects of the files it deleted are deleted once it committed. */
  private async batchOf(work: (trx: Db) => Promise<{ n: number; objects: ObjectLocation[] }>): Promise<number> {
    const done = await this.deps.db.transaction().execute(work);
    await this.deps.files.purge(done.objects);
    return done.n;
  }

  /** In a batch's transaction: the objects of these submissions' files are to be deleted. */
  private async forget(trx: Executor, submissionIds: readonly string[]): Promise<ObjectLocation[]> {
    const objects = await this.deps.store.objectsOf(trx, submissionIds);
    await this.deps.files.forget(trx, objects);
    return objects;
  }
}
