import type { Actor } from '../audit/index.ts';

/**
 * A change request's life (issue 24): draft -> in_review -> approved -> applied or scheduled (-> applied),
 * and rejected or cancelled on the way. An environment that needs no approval (not protected) skips
 * the review: a submitted request is approved at once.
 */
export type ChangeStatus = 'draft' | 'in_review' | 'approved' | 'scheduled' | 'applied' | 'rejected' | 'cancelled';

export const CHANGE_STATUSES: readonly ChangeStatus[] = ['draft', 'in_review', 'approved', 'scheduled', 'applied', 'rejected', 'cancelled'];

/** Requests still to be decided or applied; the project's list of open changes shows these. */
export const OPEN_STATUSES: readonly ChangeStatus[] = ['draft', 'in_review', 'approved', 'scheduled'];

export type ChangeAction = 'edit' | 'submit' | 'approve' | 'reject' | 'cancel' | 'apply' | 'schedule' | 'unschedule' | 'comment';

/** What a request is, as the rules see it. */
export interface ChangeFacts {
  status: ChangeStatus;
  /** Approvals of its current revision. */
  approvals: number;
  /** Approvals its environment needs now (0 when it is not protected). */
  required: number;
}

/** Why an action is refused, or undefined when it may go ahead. */
export type Refusal = { reason: 'state' } | { reason: 'approvals'; approvals: number; required: number } | undefined;

const ALLOWED: Record<ChangeAction, readonly ChangeStatus[]> = {
  edit: ['draft', 'in_review', 'approved', 'scheduled'],
  submit: ['draft'],
  approve: ['in_review', 'approved'],
  reject: ['in_review', 'approved', 'scheduled'],
  cancel: ['draft', 'in_review', 'approved', 'scheduled'],
  apply: ['draft', 'in_review', 'approved'],
  schedule: ['draft', 'in_review', 'approved', 'scheduled'],
  unschedule: ['scheduled'],
  comment: CHANGE_STATUSES,
};

/**
 * Whether `action` may happen to a request now. Applying and scheduling need the approvals its
 * environment asks for; where none is needed, a draft may be applied or scheduled at once.
 */
export function refusalOf(action: ChangeAction, facts: ChangeFacts): Refusal {
  if (!ALLOWED[action].includes(facts.status)) return { reason: 'state' };
  if ((action === 'apply' || action === 'schedule') && facts.approvals < facts.required) {
    return { reason: 'approvals', approvals: facts.approvals, required: facts.required };
  }
  return undefined;
}

/** The status once `action` happened (for actions refusalOf allowed). */
export function statusAfter(action: ChangeAction, facts: ChangeFacts): ChangeStatus {
  const reviewed = (approvals: number): ChangeStatus => (approvals >= facts.required ? 'approved' : 'in_review');
  switch (action) {
    case 'submit':
      return reviewed(facts.approvals);
    case 'approve':
      return reviewed(facts.approvals + 1);
    case 'edit':
      // An edit resets approvals: what was approved is not what is there now. A draft stays a draft,
      // a request that needs no approval keeps its place (a scheduled one stays scheduled).
      if (facts.status === 'draft') return 'draft';
      if (facts.required === 0) return facts.status;
      return 'in_review';
    case 'reject':
      return 'rejected';
    case 'cancel':
      return 'cancelled';
    case 'apply':
      return 'applied';
    case 'schedule':
      return 'scheduled';
    case 'unschedule':
      return reviewed(facts.approvals);
    case 'comment':
      return facts.status;
  }
}

/** Why a member may not approve, or undefined when they may. Roles come from the route (editors and owners). */
export type ApprovalRefusal = 'not_member' | 'own_request' | 'own_revision' | undefined;

/** One revision of a request's changes and who wrote it (issue 29 item 1). */
export interface Revision {
  revision: number;
  author: Pick<Actor, 'type' | 'id' | 'label'>;
  /** Writing it cleared approvals there were. */
  approvalsReset: boolean;
}

/**
 * The revisions whose authors may not approve: those written since the approvals were last reset (the
 * newest revision whose writing cleared approvals, and every one after it), or all of them when the
 * approvals were never reset. Who rewrote someone else's request is then never a reviewer of it.
 */
export function revisionsSinceReset(revisions: readonly Revision[]): Revision[] {
  const resets = revisions.filter((r) => r.approvalsReset).map((r) => r.revision);
  const from = resets.length === 0 ? -Infinity : Math.max(...resets);
  return revisions.filter((r) => r.revision >= from);
}

/**
 * Approvals come from members (not the admin token) other than the request's author and other than
 * whoever wrote a revision of it since its approvals were last reset.
 */
export function approvalRefusal(author: Pick<Actor, 'type' | 'id'>, revisions: readonly Revision[], approver: { memberId: string | null }): ApprovalRefusal {
  if (approver.memberId === null) return 'not_member';
  if (author.id !== null && author.id === approver.memberId) return 'own_request';
  if (revisionsSinceReset(revisions).some((r) => r.author.id === approver.memberId)) return 'own_revision';
  return undefined;
}

/**
 * True when two actors are the same person or credential: a member through a session or one of their
 * access tokens is one member; the admin token is itself (flags as code keeps only its own requests).
 */
export function sameActor(a: Pick<Actor, 'type' | 'id' | 'label'>, b: Pick<Actor, 'type' | 'id' | 'label'>): boolean {
  if (a.id !== null || b.id !== null) return a.id === b.id;
  return a.type === b.type && a.label === b.label;
}

/** A scheduled request applied this long after its time or later is recorded as applied late (the process was down). */
export const LATE_AFTER_MS = 60_000;

/** True when an application at `now` of a request due at `due` is late. */
export const isLate = (due: string, now: Date): boolean => now.getTime() - new Date(due).getTime() >= LATE_AFTER_MS;

/** One field that differs between two configurations. */
export interface FieldDifference {
  field: string;
  from: unknown;
  to: unknown;
}

/** JSON with the keys of every object sorted: two values are the same configuration when these are equal (arrays keep their order). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** The fields of `fields` whose values differ (key order of objects aside), in the order of `fields`. */
export function differences<T extends object>(from: T, to: T, fields: ReadonlyArray<keyof T & string>): FieldDifference[] {
  return fields.flatMap((field) => {
    const a = from[field] ?? null;
    const b = to[field] ?? null;
    return canonicalJson(a) === canonicalJson(b) ? [] : [{ field, from: a, to: b }];
  });
}
