import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { DeliveryInput, OutboxStore } from '../outbox/index.ts';
import type { IncomingFile, Submission } from './submission.ts';
import type { SubmissionStore } from './submission.store.ts';

export interface SubmissionWrite {
  submission: Submission;
  files: IncomingFile[];
  deliveries: DeliveryInput[];
}

interface Queued {
  write: SubmissionWrite;
  resolve: () => void;
  reject: (error: unknown) => void;
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

  constructor(
    private readonly db: Db,
    private readonly store: SubmissionStore,
    private readonly outbox: OutboxStore,
  ) {}

  /** Resolves once the submission, its files and its deliveries are committed. */
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
    const { submission, files, deliveries } = item.write;
    if (files.length === 0 && deliveries.length === 0) {
      // One INSERT is atomic on its own.
      await this.store.insert(this.db, submission, files);
    } else {
      await this.db.transaction().execute(async (trx) => {
        await this.store.insert(trx, submission, files);
        await this.outbox.enqueue(trx, submission.id, deliveries, submission.createdAt);
      });
    }
    item.resolve();
  }

  private async writeTogether(batch: Queued[]): Promise<void> {
    const outcomes = await this.db.transaction().execute(async (trx) => {
      const results: Array<{ ok: true } | { ok: false; error: unknown }> = [];
      for (const { write } of batch) {
        await sql`savepoint submission`.execute(trx);
        try {
          await this.store.insert(trx, write.submission, write.files);
          await this.outbox.enqueue(trx, write.submission.id, write.deliveries, write.submission.createdAt);
          await sql`release savepoint submission`.execute(trx);
          results.push({ ok: true });
        } catch (error) {
          await sql`rollback to savepoint submission`.execute(trx);
          await sql`release savepoint submission`.execute(trx);
          results.push({ ok: false, error });
        }
      }
      return results;
    });
    outcomes.forEach((outcome, i) => (outcome.ok ? batch[i]!.resolve() : batch[i]!.reject(outcome.error)));
  }
}
