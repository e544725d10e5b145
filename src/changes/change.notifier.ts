import { levelOn, type MemberService, type ProjectRoleService } from '../identity/index.ts';
import { newId } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import type { OutageLog } from '../db/outage.ts';
import { type AttemptResult, DeliveryLoop, type MailSender } from '../delivery/index.ts';
import type { Environment, Project } from '../projects/index.ts';
import type { ChangeNotification, ChangeRequestRecord, ChangeStore } from './change.store.ts';

export interface ChangeNotifierDeps {
  db: Db;
  store: ChangeStore;
  /** Undefined when SMTP_URL is not set: nothing is queued. */
  mail: Pick<MailSender, 'send'> | undefined;
  /** Who reviews (editors and owners) and the authors' addresses. */
  accounts: Pick<MemberService, 'listUsers' | 'getUser'>;
  /** Who has a role on a project: only members who may see a request's project hear of it. */
  projectRoles: Pick<ProjectRoleService, 'roleOn'>;
  publicUrl: string;
  clock: () => Date;
  /** Attempts before an e-mail is given up. */
  maxAttempts: number;
  log: OutageLog;
}

/** What a notification is about. */
export type ChangeNotice = 'review' | 'approved' | 'rejected' | 'applied' | 'failed';

/** An e-mail's lease while it is sent, and the wait before it is tried again. */
const RETRY_MS = 60_000;
/** E-mails sent in one round of the scheduler at the most. */
const PER_ROUND = 20;
/** Levels of access.ts: who may see a project, and who may approve its change requests. */
const VIEWER_LEVEL = 1;
const EDITOR_LEVEL = 2;

/**
 * E-mails about change requests (issue 24), through the SMTP settings of the instance (SMTP_URL,
 * FLAGPOST_MAIL_FROM): reviewers (members who may approve in the request's project, by their instance
 * role or their role on the project, other than the author) when a request waits for them, the author
 * (while they may still see the project) when it is approved, rejected, applied or could not be applied
 * at its time. A member without a role on the project never hears of it (issue 29 item 7). Queued
 * in the transaction of what they announce, sent by the scheduler's rounds (the outbox's delivery loop,
 * without a timer of its own), retried a minute apart.
 */
export class ChangeNotifier {
  /** The e-mails' delivery: one claimed at a time, just before it is sent, at most PER_ROUND a round. */
  readonly deliveries: DeliveryLoop<ChangeNotification>;

  constructor(private readonly deps: ChangeNotifierDeps) {
    const { db, store } = deps;
    this.deliveries = new DeliveryLoop<ChangeNotification>({
      name: 'change request e-mail',
      log: deps.log,
      pollMs: 0,
      batch: 1,
      maxPerRun: PER_ROUND,
      leaseMs: RETRY_MS,
      maxAttempts: deps.maxAttempts,
      retryDelayMs: () => RETRY_MS,
      clock: deps.clock,
      queue: {
        claimDue: (now, leaseUntil, limit) => store.claimDueNotifications(db, now, leaseUntil, limit),
        attempt: (mail) => this.send(mail),
        recordOutcome: (mail, outcome) => store.recordNotificationOutcome(db, mail.id, outcome),
        describe: (mail) => ({ changeNotification: mail.id }),
        pendingStats: () => store.pendingNotificationStats(db),
      },
    });
  }

  /**
   * Who gets the e-mails of `notice`; read before the transaction that queues them (on SQLite a read
   * outside a running transaction would wait for it).
   */
  async recipients(notice: ChangeNotice, request: Pick<ChangeRequestRecord, 'author' | 'projectId'>): Promise<string[]> {
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
   * Sends the e-mails due now (at most PER_ROUND) and answers how many attempts were made. Each is
   * claimed first (its attempt counted and leased), so instances never send one twice at once.
   */
  async deliverDue(): Promise<number> {
    if (!this.deps.mail) return 0;
    return this.deliveries.deliverDue();
  }

  private async send(mail: ChangeNotification): Promise<AttemptResult> {
    if (!this.deps.mail) return { ok: false, error: 'e-mail is off: SMTP_URL is not set' };
    return this.deps.mail.send({ to: mail.recipient, subject: mail.subject, text: mail.body });
  }

  /** Editors, project editors and above (who may approve), other than the author. */
  private async reviewers(request: Pick<ChangeRequestRecord, 'author' | 'projectId'>): Promise<string[]> {
    const users = (await this.deps.accounts.listUsers()).filter((u) => u.id !== request.author.id);
    const levels = await Promise.all(users.map((u) => this.levelOn(u, request.projectId)));
    return users.filter((_, i) => levels[i]! >= EDITOR_LEVEL).map((u) => u.email);
  }

  private async author(request: Pick<ChangeRequestRecord, 'author' | 'projectId'>): Promise<string[]> {
    if (request.author.id === null) return [];
    let user: Awaited<ReturnType<MemberService['getUser']>>;
    try {
      user = await this.deps.accounts.getUser(request.author.id);
    } catch {
      // The author was removed: nobody to tell.
      return [];
    }
    return (await this.levelOn(user, request.projectId)) >= VIEWER_LEVEL ? [user.email] : [];
  }

  private async levelOn(user: { id: string; role: Parameters<typeof levelOn>[0] }, projectId: string): Promise<number> {
    return levelOn(user.role, await this.deps.projectRoles.roleOn(user.id, projectId));
  }
}
