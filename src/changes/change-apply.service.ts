import { type Actor, type AuditLog, type FieldChange } from '../audit/index.ts';
import { nowIso } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import { AppError, message, messages } from '../errors.ts';
import type { DomainEvents, Emit } from '../events/index.ts';
import type { FlagConfig, FlagService } from '../flags/index.ts';
import { approvalsNeeded, type Environment, type Project, type ProjectService } from '../projects/index.ts';
import type { SegmentService, SegmentValues } from '../segments/index.ts';
import { isLate, refusalOf, statusAfter } from './change.ts';
import { checkAction, recordRequestEntry } from './change-request.writes.ts';
import type { ChangeItem, ChangeRequestRecord, ChangeStore } from './change.store.ts';
import type { ChangeNotifier } from './change.notifier.ts';
import { type ChangeRequestView, type ChangeRequestViews, environmentOf } from './change-request.views.ts';

export interface ChangeApplierDeps {
  db: Db;
  store: ChangeStore;
  projects: ProjectService;
  flags: FlagService;
  segments: SegmentService;
  views: Pick<ChangeRequestViews, 'find' | 'view'>;
  /** Applications run in one transaction whose flag.changed and segment.changed reach the read models after the commit. */
  events: DomainEvents;
  audit: Pick<AuditLog, 'record'>;
  /** E-mails the author when a request is applied, or could not be at its time. */
  notifier: Pick<ChangeNotifier, 'queue' | 'recipients'>;
  clock: () => Date;
}

/** What the scheduler's log says of a change it applied at its time. */
export interface AppliedOnSchedule {
  id: string;
  title: string;
  project: string;
  environment: string;
  scheduledAt: string | null;
  late: boolean;
}

/** Due requests applied per round of the scheduler. */
const DUE_BATCH = 20;

/**
 * Applies change requests, now or at their time (issue 24). An application is one transaction: every
 * change goes through the same write path as a direct write (FlagService.applyConfig, SegmentService
 * .applyConfig: checks, audit entry with before and after, announcement), and a flag or segment written
 * since the request was based on it refuses the whole request, naming it.
 */
export class ChangeApplier {
  constructor(private readonly deps: ChangeApplierDeps) {}

  /** Applies an approved request (or one whose environment needs no approval) now. */
  async apply(projectKey: string, id: string, actor: Actor): Promise<ChangeRequestView> {
    const { project, environment, record } = await this.deps.views.find(projectKey, id);
    await this.checkReady('apply', record, environment);
    const now = this.deps.clock();
    const next: ChangeRequestRecord = { ...record, status: 'applied', appliedAt: now.toISOString(), failure: null, updatedAt: now.toISOString() };
    if (!(await this.applyRecord(project, environment, record, next, actor, {}))) {
      throw new AppError('conflict', message('changeRequestState', { status: 'changed meanwhile', action: 'applied' }));
    }
    return this.deps.views.view(projectKey, id);
  }

  /** Sets (or moves) the time a request is applied at; it must be approved by then as now. */
  async schedule(projectKey: string, id: string, at: string, actor: Actor): Promise<ChangeRequestView> {
    const { project, environment, record } = await this.deps.views.find(projectKey, id);
    const when = new Date(at);
    if (when.getTime() <= this.deps.clock().getTime())
      throw AppError.validation([{ field: 'body.at', reason: 'must be in the future' }], messages.scheduleInPast);
    await this.checkReady('schedule', record, environment);
    const next: ChangeRequestRecord = {
      ...record,
      status: 'scheduled',
      scheduledAt: when.toISOString(),
      scheduledBy: actor,
      failure: null,
      updatedAt: nowIso(this.deps.clock),
    };
    await this.writeStatus(project, environment, record, next, actor, 'change_request.scheduled', {
      scheduledAt: { before: record.scheduledAt, after: next.scheduledAt },
    });
    return this.deps.views.view(projectKey, id);
  }

  /** Takes a scheduled request off the schedule; it stays approved (or in review). */
  async unschedule(projectKey: string, id: string, actor: Actor): Promise<ChangeRequestView> {
    const { project, environment, record } = await this.deps.views.find(projectKey, id);
    const approvals = (await this.deps.store.approvals(this.deps.db, record.id)).length;
    const facts = { status: record.status, approvals, required: approvalsNeeded(environment) };
    if (refusalOf('unschedule', facts)) throw new AppError('conflict', message('changeRequestState', { status: record.status, action: 'unscheduled' }));
    const next: ChangeRequestRecord = { ...record, status: statusAfter('unschedule', facts), scheduledAt: null, updatedAt: nowIso(this.deps.clock) };
    await this.writeStatus(project, environment, record, next, actor, 'change_request.unscheduled', {
      scheduledAt: { before: record.scheduledAt, after: null },
    });
    return this.deps.views.view(projectKey, id);
  }

  /**
   * Applies every scheduled request that is due, and answers how many it applied. Each is claimed by
   * the conditional update that marks it applied, in the transaction that applies it: on PostgreSQL a
   * second instance's claim waits for the row and then finds it applied, so a request is applied once
   * whatever the number of instances. One due while the process was down is applied on the next
   * round (the first is at start) and recorded as late.
   */
  async runDue(onApplied?: (applied: AppliedOnSchedule) => void): Promise<number> {
    const now = this.deps.clock();
    const due = await this.deps.store.listDue(this.deps.db, now.toISOString(), DUE_BATCH);
    if (due.length === 0) return 0;
    const projects = await this.deps.projects.listProjects();
    let applied = 0;
    for (const record of due) {
      const project = projects.find((p) => p.id === record.projectId);
      if (!project) continue;
      const environment = environmentOf(project, record.environmentId);
      const late = record.scheduledAt !== null && isLate(record.scheduledAt, now);
      const next: ChangeRequestRecord = {
        ...record,
        status: 'applied',
        appliedAt: now.toISOString(),
        appliedLate: late,
        failure: null,
        updatedAt: now.toISOString(),
      };
      const actor = record.scheduledBy ?? record.author;
      const note: Record<string, FieldChange> = { scheduledAt: { after: record.scheduledAt }, ...(late ? { appliedLate: { after: true } } : {}) };
      try {
        if (await this.applyRecord(project, environment, record, next, actor, note, true)) {
          applied++;
          onApplied?.({ id: record.id, title: record.title, project: project.key, environment: environment.key, scheduledAt: record.scheduledAt, late });
        }
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        // Refused (a conflict, too few approvals now, an invalid configuration): it stays approved or in
        // review, off the schedule, and says why.
        const approvals = (await this.deps.store.approvals(this.deps.db, record.id)).length;
        const status = statusAfter('unschedule', { status: 'scheduled', approvals, required: approvalsNeeded(environment) });
        const failed: ChangeRequestRecord = { ...record, status, scheduledAt: null, failure: error.message, updatedAt: now.toISOString() };
        const author = await this.deps.notifier.recipients('failed', failed);
        await this.deps.db.transaction().execute(async (trx) => {
          if (!(await this.deps.store.update(trx, failed, 'scheduled'))) return;
          await this.recordEntry(trx, actor, project, environment, failed, 'change_request.failed', { failure: { after: error.message }, ...note });
          await this.deps.notifier.queue(trx, 'failed', author, failed, project, environment, error.message);
        });
      }
    }
    return applied;
  }

  /**
   * Applies changes to one environment's flags and the project's segments within the caller's
   * transaction: segments first, since the flags' rules are checked with them.
   */
  async applyItems(
    trx: Executor,
    emit: Emit,
    target: { project: Project; environment: Environment },
    items: readonly ChangeItem[],
    actor: Actor,
    note: Record<string, FieldChange>,
  ): Promise<void> {
    for (const item of items.filter((i) => i.kind === 'segment')) {
      await this.deps.segments.applyConfig(trx, emit, target.project, item.key, item.config as Required<SegmentValues>, item.baseVersion, actor, note);
    }
    for (const item of items.filter((i) => i.kind === 'flag')) {
      await this.deps.flags.applyConfig(trx, emit, target, item.key, item.config as unknown as FlagConfig, item.baseVersion ?? undefined, actor, note);
    }
  }

  /** Marks `record` as `next` (claiming it) and applies its items, all in one transaction; false when another claim won. */
  private async applyRecord(
    project: Project,
    environment: Environment,
    record: ChangeRequestRecord,
    next: ChangeRequestRecord,
    actor: Actor,
    note: Record<string, FieldChange>,
    recheckApprovals = false,
  ): Promise<boolean> {
    // A refused application changes nothing (the answer says why); a scheduled one records why itself (runDue).
    const author = await this.deps.notifier.recipients('applied', next);
    return this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      if (!(await this.deps.store.update(trx, next, record.status))) return false;
      if (recheckApprovals) {
        const approvals = (await this.deps.store.approvals(trx, record.id)).length;
        const required = approvalsNeeded(environment);
        if (approvals < required) throw new AppError('conflict', message('changeRequestApprovals', { approvals, required }));
      }
      const items = await this.deps.store.items(trx, record.id);
      await this.applyItems(trx, emit, { project, environment }, items, actor, { changeRequest: { after: record.id }, ...note });
      await this.recordEntry(trx, actor, project, environment, next, 'change_request.applied', {
        status: { before: record.status, after: 'applied' },
        ...note,
      });
      await this.deps.notifier.queue(trx, 'applied', author, next, project, environment);
      return true;
    });
  }

  private async checkReady(action: 'apply' | 'schedule', record: ChangeRequestRecord, environment: Environment): Promise<void> {
    checkAction(action, record, environment, (await this.deps.store.approvals(this.deps.db, record.id)).length);
  }

  private async writeStatus(
    project: Project,
    environment: Environment,
    record: ChangeRequestRecord,
    next: ChangeRequestRecord,
    actor: Actor,
    action: string,
    changes: Record<string, FieldChange>,
  ): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      if (!(await this.deps.store.update(trx, next, record.status))) {
        throw new AppError('conflict', message('changeRequestState', { status: 'changed meanwhile', action: 'changed' }));
      }
      await this.recordEntry(trx, actor, project, environment, next, action, { status: { before: record.status, after: next.status }, ...changes });
    });
  }

  private async recordEntry(
    trx: Executor,
    actor: Actor,
    project: Project,
    environment: Environment,
    record: ChangeRequestRecord,
    action: string,
    changes: Record<string, FieldChange>,
  ): Promise<void> {
    await recordRequestEntry(this.deps.audit, trx, actor, { project, environment }, record, action, changes);
  }
}
