import type { Selectable } from 'kysely';
import type { Actor } from '../audit/index.ts';
import { fromBool, toBool } from '../db/codec.ts';
import type { Dialect, Executor } from '../db/database.ts';
import { claimDueRows, type DeliveryOutcome, newQueueRow, pendingStatsOf, recordMailOutcome } from '../delivery/index.ts';
import type { ChangeStatus, Revision } from './change.ts';
import type { ChangeItemsTable, ChangeRequestsTable } from './change.table.ts';

/** A change request as stored, without its items, approvals and comments. */
export interface ChangeRequestRecord {
  id: string;
  projectId: string;
  environmentId: string;
  title: string;
  description: string;
  status: ChangeStatus;
  author: Actor;
  revision: number;
  scheduledAt: string | null;
  scheduledBy: Actor | null;
  appliedAt: string | null;
  appliedLate: boolean;
  failure: string | null;
  createdAt: string;
  updatedAt: string;
  /** Which feature opened it: 'flags_as_code' (an apply, which finds its open request again by this); null otherwise. */
  origin: ChangeOrigin | null;
}

export type ChangeItemKind = 'flag' | 'segment' | 'release';

/** The features that open change requests for someone and find them again. */
export type ChangeOrigin = 'flags_as_code';

/**
 * One changed flag or segment: its whole configuration after the change, and the version it was based on;
 * or a release to start (issue 33): `key` the flag's slug, `config` the release plan with its template's
 * parts filled in (what is approved), `baseVersion` null (the plan is checked again when it is applied).
 */
export interface ChangeItem {
  kind: ChangeItemKind;
  key: string;
  /** null: a segment that did not exist. */
  baseVersion: number | null;
  config: Record<string, unknown>;
  /**
   * Once applied, the configuration it replaced (null: a segment it created); undefined while not applied,
   * and for requests applied before migration 0033.
   */
  appliedBefore?: Record<string, unknown> | null;
}

export interface Approval {
  userId: string;
  label: string;
  createdAt: string;
}

export interface Comment {
  id: string;
  authorId: string | null;
  authorLabel: string;
  body: string;
  createdAt: string;
}

const toRecord = (row: Selectable<ChangeRequestsTable>): ChangeRequestRecord => ({
  id: row.id,
  projectId: row.project_id,
  environmentId: row.environment_id,
  title: row.title,
  description: row.description,
  status: row.status as ChangeStatus,
  author: { type: row.author_type as Actor['type'], id: row.author_id, label: row.author_label },
  revision: row.revision,
  scheduledAt: row.scheduled_at,
  scheduledBy: row.scheduled_by === null ? null : (JSON.parse(row.scheduled_by) as Actor),
  appliedAt: row.applied_at,
  appliedLate: toBool(row.applied_late),
  failure: row.failure,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  origin: row.origin === 'flags_as_code' ? 'flags_as_code' : null,
});

const toRow = (r: ChangeRequestRecord): Selectable<ChangeRequestsTable> => ({
  id: r.id,
  project_id: r.projectId,
  environment_id: r.environmentId,
  title: r.title,
  description: r.description,
  status: r.status,
  author_type: r.author.type,
  author_id: r.author.id,
  author_label: r.author.label,
  revision: r.revision,
  scheduled_at: r.scheduledAt,
  scheduled_by: r.scheduledBy === null ? null : JSON.stringify(r.scheduledBy),
  applied_at: r.appliedAt,
  applied_late: fromBool(r.appliedLate),
  failure: r.failure,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
  origin: r.origin,
});

const toItem = (row: Selectable<ChangeItemsTable>): ChangeItem => ({
  kind: row.kind === 'segment' || row.kind === 'release' ? row.kind : 'flag',
  key: row.key,
  baseVersion: row.base_version,
  config: JSON.parse(row.config) as Record<string, unknown>,
  ...(row.applied_before === null ? {} : { appliedBefore: JSON.parse(row.applied_before) as Record<string, unknown> | null }),
});

/** A change-request e-mail as claimed for an attempt (`attempts` counts it). */
export interface ChangeNotification {
  id: string;
  recipient: string;
  subject: string;
  body: string;
  attempts: number;
}

export class ChangeStore {
  constructor(private readonly dialect: Dialect) {}

  /** Inserts a request with its items and its first revision, by its author. */
  async insert(db: Executor, request: ChangeRequestRecord, items: ChangeItem[]): Promise<void> {
    await db.insertInto('change_requests').values(toRow(request)).execute();
    await this.replaceItems(db, request.id, items);
    await this.addRevision(db, request.id, { revision: request.revision, author: request.author, approvalsReset: false }, request.createdAt);
  }

  /**
   * Writes a request's fields; with `expectedStatus`, only while it still has that status, and with
   * `expectedRevision` only while it is still at that revision (false otherwise).
   */
  async update(db: Executor, request: ChangeRequestRecord, expectedStatus?: ChangeStatus, expectedRevision?: number): Promise<boolean> {
    const { id, project_id, created_at, ...fields } = toRow(request);
    let query = db.updateTable('change_requests').set(fields).where('id', '=', id);
    if (expectedStatus !== undefined) query = query.where('status', '=', expectedStatus);
    if (expectedRevision !== undefined) query = query.where('revision', '=', expectedRevision);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async replaceItems(db: Executor, requestId: string, items: ChangeItem[]): Promise<void> {
    await db.deleteFrom('change_items').where('change_request_id', '=', requestId).execute();
    if (items.length === 0) return;
    await db
      .insertInto('change_items')
      .values(
        items.map((item, position) => ({
          id: `${requestId}:${position}`,
          change_request_id: requestId,
          position,
          kind: item.kind,
          key: item.key,
          base_version: item.baseVersion,
          config: JSON.stringify(item.config),
          applied_before: null,
        })),
      )
      .execute();
  }

  /** Keeps what applying one item of a request replaced (null: it created a segment), so the request's changes stay readable. */
  async setAppliedBefore(db: Executor, requestId: string, item: Pick<ChangeItem, 'kind' | 'key'>, before: Record<string, unknown> | null): Promise<void> {
    await db
      .updateTable('change_items')
      .set({ applied_before: JSON.stringify(before) })
      .where('change_request_id', '=', requestId)
      .where('kind', '=', item.kind)
      .where('key', '=', item.key)
      .execute();
  }

  async find(db: Executor, projectId: string, id: string): Promise<ChangeRequestRecord | undefined> {
    const row = await db.selectFrom('change_requests').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  /** A project's requests with one of `statuses` (all when empty), newest first, at most `limit`. */
  async list(db: Executor, projectId: string, statuses: readonly ChangeStatus[], limit: number): Promise<ChangeRequestRecord[]> {
    let query = db.selectFrom('change_requests').selectAll().where('project_id', '=', projectId);
    if (statuses.length > 0) query = query.where('status', 'in', [...statuses]);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toRecord);
  }

  /** A project's requests that `origin` opened and that are still open (`statuses`), newest first. */
  async listByOrigin(db: Executor, projectId: string, origin: ChangeOrigin, statuses: readonly ChangeStatus[]): Promise<ChangeRequestRecord[]> {
    const rows = await db
      .selectFrom('change_requests')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('origin', '=', origin)
      .where('status', 'in', [...statuses])
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map(toRecord);
  }

  /** Scheduled requests due at `now`, oldest first. */
  async listDue(db: Executor, now: string, limit: number): Promise<ChangeRequestRecord[]> {
    const rows = await db
      .selectFrom('change_requests')
      .selectAll()
      .where('status', '=', 'scheduled')
      .where('scheduled_at', '<=', now)
      .orderBy('scheduled_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  async items(db: Executor, requestId: string): Promise<ChangeItem[]> {
    const rows = await db.selectFrom('change_items').selectAll().where('change_request_id', '=', requestId).orderBy('position').execute();
    return rows.map(toItem);
  }

  async approvals(db: Executor, requestId: string): Promise<Approval[]> {
    const rows = await db.selectFrom('change_approvals').selectAll().where('change_request_id', '=', requestId).orderBy('created_at').execute();
    return rows.map((r) => ({ userId: r.user_id, label: r.label, createdAt: r.created_at }));
  }

  /** Adds an approval; a member who approved already keeps their one approval. */
  async approve(db: Executor, requestId: string, approval: Approval): Promise<void> {
    await db
      .insertInto('change_approvals')
      .values({ change_request_id: requestId, user_id: approval.userId, label: approval.label, created_at: approval.createdAt })
      .onConflict((oc) => oc.columns(['change_request_id', 'user_id']).doNothing())
      .execute();
  }

  /** Removes a request's approvals and answers how many there were. */
  async clearApprovals(db: Executor, requestId: string): Promise<number> {
    const result = await db.deleteFrom('change_approvals').where('change_request_id', '=', requestId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Who wrote each revision of a request, oldest first. */
  async revisions(db: Executor, requestId: string): Promise<Revision[]> {
    const rows = await db
      .selectFrom('change_request_revisions')
      .selectAll()
      .where('change_request_id', '=', requestId)
      .orderBy('revision')
      .orderBy('created_at')
      .execute();
    return rows.map((r) => ({
      revision: Number(r.revision),
      author: { type: r.author_type as Actor['type'], id: r.author_id, label: r.author_label },
      approvalsReset: toBool(r.approvals_reset),
    }));
  }

  async addRevision(db: Executor, requestId: string, revision: Revision, createdAt: string): Promise<void> {
    await db
      .insertInto('change_request_revisions')
      .values({
        id: `${requestId}:${revision.revision}`,
        change_request_id: requestId,
        revision: revision.revision,
        author_type: revision.author.type,
        author_id: revision.author.id,
        author_label: revision.author.label,
        approvals_reset: fromBool(revision.approvalsReset),
        created_at: createdAt,
      })
      .execute();
  }

  async comments(db: Executor, requestId: string): Promise<Comment[]> {
    const rows = await db.selectFrom('change_comments').selectAll().where('change_request_id', '=', requestId).orderBy('created_at').orderBy('id').execute();
    return rows.map((r) => ({ id: r.id, authorId: r.author_id, authorLabel: r.author_label, body: r.body, createdAt: r.created_at }));
  }

  async addComment(db: Executor, requestId: string, comment: Comment): Promise<void> {
    await db
      .insertInto('change_comments')
      .values({
        id: comment.id,
        change_request_id: requestId,
        author_id: comment.authorId,
        author_label: comment.authorLabel,
        body: comment.body,
        created_at: comment.createdAt,
      })
      .execute();
  }

  async queueNotifications(
    db: Executor,
    mails: Array<{ id: string; requestId: string; recipient: string; subject: string; body: string }>,
    now: string,
  ): Promise<void> {
    if (mails.length === 0) return;
    await db
      .insertInto('change_notifications')
      .values(
        mails.map((m) => ({
          id: m.id,
          change_request_id: m.requestId,
          recipient: m.recipient,
          subject: m.subject,
          body: m.body,
          ...newQueueRow(now),
          sent_at: null,
        })),
      )
      .execute();
  }

  /** Claims up to `limit` due e-mails, each with its attempt counted and leased until `leaseUntil` (`claimDueRows`). */
  async claimDueNotifications(db: Executor, now: string, leaseUntil: string, limit: number): Promise<ChangeNotification[]> {
    const rows = await claimDueRows(db, this.dialect, 'change_notifications', { now, leaseUntil, limit });
    return rows.map((r) => ({ id: r.id, recipient: r.recipient, subject: r.subject, body: r.body, attempts: Number(r.attempts) }));
  }

  /** Writes an attempt's outcome: sent (at the attempt's end), pending again (at its next time), or failed. */
  async recordNotificationOutcome(db: Executor, id: string, outcome: DeliveryOutcome): Promise<void> {
    await recordMailOutcome(db, 'change_notifications', id, outcome);
  }

  /** How many e-mails wait (pending, leased ones included) and when the oldest of them was queued. */
  pendingNotificationStats(db: Executor): Promise<{ pending: number; oldestCreatedAt: string | null }> {
    return pendingStatsOf(db, 'change_notifications');
  }
}
