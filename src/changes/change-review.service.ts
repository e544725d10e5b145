import { type Actor, type AuditLog, changesOf } from '../audit/index.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, message, messages } from '../errors.ts';
import type { DomainEvents } from '../events/index.ts';
import { approvalsNeeded } from '../projects/index.ts';
import { approvalRefusal, type ChangeAction, statusAfter } from './change.ts';
import type { ChangeRequestRecord, ChangeStore } from './change.store.ts';
import type { ChangeNotifier } from './change.notifier.ts';
import type { ChangeRequestView, ChangeRequestViews } from './change-request.views.ts';
import { checkAction, pastTense, recordRequestEntry, writeRequestIn } from './change-request.writes.ts';

export interface ChangeReviewServiceDeps {
  db: Db;
  store: ChangeStore;
  views: ChangeRequestViews;
  audit: Pick<AuditLog, 'record'>;
  /** E-mails reviewers when a request waits for them, its author when it is approved or rejected. */
  notifier: Pick<ChangeNotifier, 'queue' | 'recipients'>;
  clock: () => Date;
  /** Announces `change_request.changed` after the commit (project webhooks deliver at once). */
  events: DomainEvents;
}

/**
 * The review of a change request (issue 24): submitted, approved (of one revision, by members who did
 * not write it), rejected, cancelled, commented on. Applying and scheduling: change-apply.service.ts.
 */
export class ChangeReviewService {
  constructor(private readonly deps: ChangeReviewServiceDeps) {}

  /** Draft -> in review (or approved when the environment needs no approval). */
  async submit(projectKey: string, id: string, actor: Actor): Promise<ChangeRequestView> {
    return this.transition(projectKey, id, 'submit', actor);
  }

  /**
   * One approval of `revision` by a member (an editor or owner: the route checks the role) other than
   * the author and other than whoever wrote a revision since the approvals were last reset (issue 29
   * item 1); 409 when the request is at another revision than the one the reviewer saw (item 4). The
   * request is approved once it has the approvals its environment needs.
   */
  async approve(projectKey: string, id: string, revision: number, actor: Actor, member: { id: string; email: string } | null): Promise<ChangeRequestView> {
    const { record } = await this.deps.views.find(projectKey, id);
    const revisions = await this.deps.store.revisions(this.deps.db, record.id);
    const refusal = approvalRefusal(record.author, revisions, { memberId: member?.id ?? null });
    if (refusal === 'not_member') throw new AppError('forbidden', messages.changeRequestApprover);
    if (refusal === 'own_request') throw new AppError('forbidden', messages.changeRequestOwnApproval);
    if (refusal === 'own_revision') throw new AppError('forbidden', messages.changeRequestOwnRevision);
    if (record.revision !== revision) throw new AppError('conflict', message('changeRequestRevision', { revision, current: record.revision }));
    return this.transition(projectKey, id, 'approve', actor, { member: member!, revision });
  }

  async reject(projectKey: string, id: string, actor: Actor): Promise<ChangeRequestView> {
    return this.transition(projectKey, id, 'reject', actor);
  }

  async cancel(projectKey: string, id: string, actor: Actor): Promise<ChangeRequestView> {
    return this.transition(projectKey, id, 'cancel', actor);
  }

  async comment(projectKey: string, id: string, body: string, actor: Actor): Promise<ChangeRequestView> {
    const { project, environment, record } = await this.deps.views.find(projectKey, id);
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.addComment(trx, record.id, { id: newId(), authorId: actor.id, authorLabel: actor.label, body, createdAt: nowIso(this.deps.clock) });
      await recordRequestEntry(this.deps.audit, trx, actor, { project, environment }, record, 'change_request.commented', { comment: { after: body } });
    });
    return this.deps.views.viewOf(project, record);
  }

  private async transition(
    projectKey: string,
    id: string,
    action: ChangeAction,
    actor: Actor,
    approval?: { member: { id: string; email: string }; revision: number },
  ): Promise<ChangeRequestView> {
    const { project, environment, record } = await this.deps.views.find(projectKey, id);
    const approvals = (await this.deps.store.approvals(this.deps.db, record.id)).length;
    const facts = { status: record.status, approvals, required: approvalsNeeded(environment) };
    checkAction(action, record, environment, approvals);
    const next: ChangeRequestRecord = { ...record, status: statusAfter(action, facts), updatedAt: nowIso(this.deps.clock) };
    if (action === 'reject' || action === 'cancel') next.scheduledAt = null;
    const notice =
      action === 'submit' && next.status === 'in_review'
        ? 'review'
        : action === 'approve' && next.status === 'approved' && record.status !== 'approved'
          ? 'approved'
          : action === 'reject'
            ? 'rejected'
            : undefined;
    const recipients = notice ? await this.deps.notifier.recipients(notice, next) : [];
    const changes = changesOf(record, next, ['status']);
    if (approval) changes.revision = { after: approval.revision };
    await this.deps.events.transaction(this.deps.db, (trx, emit) =>
      writeRequestIn(
        this.deps.store,
        trx,
        emit,
        record,
        next,
        async () => {
          if (approval) await this.deps.store.approve(trx, record.id, { userId: approval.member.id, label: approval.member.email, createdAt: next.updatedAt });
          await recordRequestEntry(this.deps.audit, trx, actor, { project, environment }, next, `change_request.${pastTense(action)}`, changes);
          if (notice) await this.deps.notifier.queue(trx, notice, recipients, next, project, environment);
        },
        // An approval counts for the revision the reviewer saw only: an edit meanwhile refuses it.
        approval?.revision,
      ),
    );
    return this.deps.views.viewOf(project, next);
  }
}
