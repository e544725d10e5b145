import type { Actor, AuditLog } from '../audit/index.ts';
import type { Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { Emit } from '../events/index.ts';
import { approvalsNeeded, type Environment, type Project } from '../projects/index.ts';
import { type ChangeAction, refusalOf } from './change.ts';
import type { ChangeRequestRecord, ChangeStore } from './change.store.ts';

// What the services that write change requests share (authoring: change-request.service.ts; review:
// change-review.service.ts; application: change-apply.service.ts). Each runs in the caller's transaction.

const pastOf: Record<ChangeAction, string> = {
  edit: 'updated',
  submit: 'submitted',
  approve: 'approved',
  reject: 'rejected',
  cancel: 'cancelled',
  apply: 'applied',
  schedule: 'scheduled',
  unschedule: 'unscheduled',
  comment: 'commented',
};

export const pastTense = (action: ChangeAction): string => pastOf[action];

/** Throws the 409 of an action the request's state (or missing approvals) does not allow. */
export function checkAction(action: ChangeAction, record: ChangeRequestRecord, environment: Environment, approvals: number): void {
  const refusal = refusalOf(action, { status: record.status, approvals, required: approvalsNeeded(environment) });
  if (refusal?.reason === 'state') throw new AppError('conflict', message('changeRequestState', { status: record.status, action: pastOf[action] }));
  if (refusal?.reason === 'approvals')
    throw new AppError('conflict', message('changeRequestApprovals', { approvals: refusal.approvals, required: refusal.required }));
}

/**
 * Writes `next` only while the request still has the status (and, with `expectedRevision`, the
 * revision) it was read with: of two members acting at once, one wins. Then `more`, and the
 * announcement after the commit.
 */
export async function writeRequestIn(
  store: ChangeStore,
  trx: Executor,
  emit: Emit,
  record: ChangeRequestRecord,
  next: ChangeRequestRecord,
  more: (trx: Executor) => Promise<void>,
  expectedRevision?: number,
): Promise<void> {
  if (!(await store.update(trx, next, record.status, expectedRevision))) {
    throw new AppError('conflict', message('changeRequestState', { status: 'changed meanwhile', action: 'changed' }));
  }
  await more(trx);
  await emit({ type: 'change_request.changed', projectId: next.projectId, changeRequestId: next.id });
}

/** The audit entry of something that happened to a request. */
export async function recordRequestEntry(
  audit: Pick<AuditLog, 'record'>,
  trx: Executor,
  actor: Actor,
  target: { project: Project; environment: Environment },
  record: ChangeRequestRecord,
  action: string,
  changes: Parameters<AuditLog['record']>[2]['changes'],
): Promise<void> {
  await audit.record(trx, actor, {
    projectId: target.project.id,
    entity: 'change_request',
    entityId: record.id,
    environmentKey: target.environment.key,
    action,
    changes,
  });
}
