import type { AccountService } from '../identity/index.ts';
import { newId } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import type { MailSender } from '../outbox/index.ts';
import type { Environment, Project } from '../projects/index.ts';
import type { ChangeRequestRecord, ChangeStore } from './change.store.ts';

export interface ChangeNotifierDeps {
  db: Db;
  store: ChangeStore;
  /** Undefined when SMTP_URL is not set: nothing is queued. */
  mail: Pick<MailSender, 'send'> | undefined;
  /** Who reviews (editors and owners) and the authors' addresses. */
  accounts: Pick<AccountService, 'listUsers' | 'getUser'>;
  publicUrl: string;
  clock: () => Date;
  /** Attempts before an e-mail is given up. */
  maxAttempts: number;
}

/** What a notification is about. */
export type ChangeNotice = 'review' | 'approved' | 'rejected' | 'applied' | 'failed';

const RETRY_MS = 60_000;

/**
 * E-mails about change requests (issue 24), through the SMTP settings of the instance (SMTP_URL,
 * FLAGPOST_MAIL_FROM): reviewers (editors and owners other than the author) when a request waits for
 * them, the author when it is approved, rejected, applied or could not be applied at its time. Queued
 * in the transaction of what they announce, sent by the scheduler's rounds, retried a minute apart.
 */
export class ChangeNotifier {
  constructor(private readonly deps: ChangeNotifierDeps) {}

  /**
   * Who gets the e-mails of `notice`; read before the transaction that queues them (on SQLite a read
   * outside a running transaction would wait for it).
   */
  async recipients(notice: ChangeNotice, request: Pick<ChangeRequestRecord, 'author'>): Promise<string[]> {
    if (!this.deps.mail) return [];
    return notice === 'review' ? this.reviewers(request) : this.author(request);
  }

  /** Queues the e-mails of `notice` to `recipients` within the caller's transaction. */
  async queue(
    trx: Executor,
    notice: ChangeNotice,
    recipients: string[],
    request: ChangeRequestRecord,
    project: Project,
    environment: Environment,
    detail = '',
  ): Promise<void> {
    if (!this.deps.mail || recipients.length === 0) return;
    const link = `${this.deps.publicUrl}/projects/${project.key}/changes/${request.id}`;
    const subjects: Record<ChangeNotice, string> = {
      review: `Review requested: ${request.title}`,
      approved: `Approved: ${request.title}`,
      rejected: `Rejected: ${request.title}`,
      applied: `Applied: ${request.title}`,
      failed: `Not applied: ${request.title}`,
    };
    const lines = [
      `Change request "${request.title}" for ${environment.name} of ${project.name}, by ${request.author.label}.`,
      notice === 'review' ? 'It waits for your review.' : `It was ${notice === 'failed' ? 'not applied at its time' : notice}.`,
      detail,
      link,
    ].filter((l) => l !== '');
    const now = this.deps.clock().toISOString();
    await this.deps.store.queueNotifications(
      trx,
      recipients.map((recipient) => ({ id: newId(), requestId: request.id, recipient, subject: `[Flagpost] ${subjects[notice]}`, body: lines.join('\n\n') })),
      now,
    );
  }

  /**
   * Sends the e-mails due now and answers how many were sent. Each is claimed first (its attempt counted
   * and its next attempt pushed back by a conditional update), so instances never send one twice at once.
   */
  async deliverDue(): Promise<number> {
    if (!this.deps.mail) return 0;
    const now = this.deps.clock();
    const due = await this.deps.store.dueNotifications(this.deps.db, now.toISOString(), 20);
    let sent = 0;
    for (const row of due) {
      const retryAt = new Date(now.getTime() + RETRY_MS).toISOString();
      if (!(await this.deps.store.claimNotification(this.deps.db, row.id, row.attempts, retryAt))) continue;
      const result = await this.deps.mail.send({ to: row.recipient, subject: row.subject, text: row.body });
      const status = result.ok ? 'sent' : row.attempts + 1 >= this.deps.maxAttempts ? 'failed' : 'pending';
      await this.deps.store.finishNotification(
        this.deps.db,
        row.id,
        status,
        result.ok ? null : (result.error ?? 'failed'),
        result.ok ? this.deps.clock().toISOString() : null,
      );
      if (result.ok) sent++;
    }
    return sent;
  }

  private async reviewers(request: Pick<ChangeRequestRecord, 'author'>): Promise<string[]> {
    const users = await this.deps.accounts.listUsers();
    return users.filter((u) => u.role !== 'viewer' && u.id !== request.author.id).map((u) => u.email);
  }

  private async author(request: Pick<ChangeRequestRecord, 'author'>): Promise<string[]> {
    if (request.author.id === null) return [];
    try {
      return [(await this.deps.accounts.getUser(request.author.id)).email];
    } catch {
      // The author was removed: nobody to tell.
      return [];
    }
  }
}
