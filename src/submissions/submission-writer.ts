import { sql } from 'kysely';
import type { Db, Executor } from '../db/database.ts';
import type { DomainEvent, DomainEvents } from '../events/index.ts';
import type { FileStorage } from '../files/index.ts';
import type { DeliveryInput } from './outbox.ts';
import type { OutboxService } from './outbox.service.ts';
import type { IncomingFile, Submission } from './submission.ts';
import type { SubmissionStore } from './submission.store.ts';

export interface SubmissionWrite {
  submission: Submission;
  /** The form's key, for the 404 of a form deleted while its submission was on the way. */
  formKey: string;
  files: IncomingFile[];
  deliveries: DeliveryInput[];
  /** The rate limit's counts this submission adds to (a form with a rate limit, migration 0034). */
  rateCounts?: { scopes: string[]; second: number };
}

interface Queued {
  write: SubmissionWrite;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface SubmissionWriterDeps {
  db: Db;
  store: SubmissionStore;
  outbox: OutboxService;
  events: DomainEvents;
  files: FileStorage;
  /**
   * SQLite: DbHandle.writeFlushedOffLoop, a commit whose disk flush does not hold the event loop (the
   * requests being read, checked and answered meanwhile, and the flag reads, go on); none on PostgreSQL.
   */
  writeFlushedOffLoop?: <T>(work: (db: Db) => Promise<T>) => Promise<T>;
}

/** Most submissions committed together; bounds the size of one transaction. */
const MAX_BATCH = 64;

/**
 * Group commit for submissions (contract D18). Every submission is committed before it is answered,
 * and a commit costs a disk flush; so the submissions that arrive while one commit runs are written
 * together in the next transaction, one flush for all of them. Each has its own savepoint: one that
 * fails is rolled back alone and its request answered with the error, the others are committed.
 */
export class SubmissionWriter {
  private readonly queue: Queued[] = [];
  private running = false;
  private commits = 0;

  constructor(private readonly deps: SubmissionWriterDeps) {}

  /** Transactions (or single-statement writes) committed so far: with grouping, fewer than the submissions written. */
  get commitCount(): number {
    return this.commits;
  }

  /** Resolves once the submission, its files and its deliveries are committed (and submission.stored announced). */
  write(write: SubmissionWrite): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      if (!this.running) {
        this.running = true;
        // The rest of this turn of the event loop may bring more submissions into the same batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      try {
        if (batch.length === 1) await this.writeAlone(batch[0]!);
        else await this.writeTogether(batch);
      } catch (error) {
        // The transaction itself failed (commit, connection): nothing of the batch is stored.
        for (const item of batch) item.reject(error);
      }
    }
    this.running = false;
  }

  private async writeAlone(item: Queued): Promise<void> {
    const { write } = item;
    // A transaction even for one: a submission is several rows (its search words, its files, its deliveries).
    await this.commit(async (trx) => {
      await this.insert(trx, write);
      await this.deps.store.addRateCounts(trx, rateCountsOf([write]));
    });
    this.commits++;
    await this.deps.events.committed(storedEvent(write));
    item.resolve();
  }

  /** A transaction, resolved once it is on disk (its flush off the event loop where the database allows). */
  private commit<T>(work: (trx: Db) => Promise<T>): Promise<T> {
    const run = (db: Db) => db.transaction().execute(work);
    return this.deps.writeFlushedOffLoop ? this.deps.writeFlushedOffLoop(run) : run(this.deps.db);
  }

  private async writeTogether(batch: Queued[]): Promise<void> {
    const outcomes = await this.commit(async (trx) => {
      const results: Array<{ ok: true } | { ok: false; error: unknown }> = [];
      for (const { write } of batch) {
        await sql`savepoint submission`.execute(trx);
        try {
          await this.insert(trx, write);
          await sql`release savepoint submission`.execute(trx);
          results.push({ ok: true });
        } catch (error) {
          try {
            await sql`rollback to savepoint submission`.execute(trx);
            await sql`release savepoint submission`.execute(trx);
          } catch {
            // The engine already ended the transaction (SQLite after a full disk): the batch fails with
            // the error that ended it, not with "no such savepoint".
            throw error;
          }
          results.push({ ok: false, error });
        }
      }
      // The rate limit's counts of the submissions stored, added up: one statement for the batch.
      await this.deps.store.addRateCounts(trx, rateCountsOf(batch.filter((_, i) => results[i]!.ok).map((item) => item.write)));
      return results;
    });
    this.commits++;
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome.ok) await this.deps.events.committed(storedEvent(batch[i]!.write));
    }
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome.ok) batch[i]!.resolve();
      else batch[i]!.reject(outcome.error);
    }
  }

  private async insert(trx: Executor, write: SubmissionWrite): Promise<void> {
    const { submission, files, deliveries, formKey } = write;
    await this.deps.store.insert(trx, submission, files, formKey);
    // The objects of the files are vouched for by their rows from this commit on (ADR 0030).
    await this.deps.files.commit(
      trx,
      files.map((f) => f.received),
    );
    await this.deps.outbox.enqueue(trx, submission, deliveries, submission.createdAt);
    await this.deps.events.runInTransaction(trx, storedEvent(write));
  }
}

/** The rate limit's counts these submissions add, one row per form, scope and second. */
function rateCountsOf(writes: readonly SubmissionWrite[]): Array<{ formId: string; scope: string; second: number; n: number }> {
  const rows = new Map<string, { formId: string; scope: string; second: number; n: number }>();
  for (const { submission, rateCounts } of writes) {
    if (!rateCounts) continue;
    for (const scope of rateCounts.scopes) {
      const key = `${submission.formId}\n${scope}\n${rateCounts.second}`;
      const row = rows.get(key);
      if (row) row.n++;
      else rows.set(key, { formId: submission.formId, scope, second: rateCounts.second, n: 1 });
    }
  }
  return [...rows.values()];
}

function storedEvent({ submission, deliveries }: SubmissionWrite): DomainEvent {
  return { type: 'submission.stored', formId: submission.formId, submissionId: submission.id, deliveries: deliveries.length };
}
