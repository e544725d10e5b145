import { type Actor, type AuditLog, changesOf } from '../audit/index.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { DomainEvents, Emit } from '../events/index.ts';
import type { Project, ProjectService } from '../projects/index.ts';
import { type Segment, segmentProblem } from '../targeting/index.ts';
import { applySegmentValues, type SegmentValues, type StoredSegment, segmentView } from './segment.ts';
import type { SegmentStore } from './segment.store.ts';

export interface SegmentServiceDeps {
  db: Db;
  store: SegmentStore;
  projects: ProjectService;
  /**
   * Announces segment.changed (the read models of every environment of the project rebuild) and
   * segment.deleting (flags refuse the delete, in its transaction, while a rule uses the segment).
   */
  events: DomainEvents;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
}

export type SegmentView = ReturnType<typeof segmentView>;

/** The fields of a segment the audit log records (all of them: a segment holds no secret). */
const AUDITED: ReadonlyArray<keyof StoredSegment & string> = ['name', 'description', 'match', 'conditions'];

/** Reusable groups of conditions, per project; rules of any environment reference them by key. */
export class SegmentService {
  constructor(private readonly deps: SegmentServiceDeps) {}

  /** Every segment of the project, by key. */
  async listSegments(projectKey: string): Promise<SegmentView[]> {
    const project = await this.deps.projects.getProject(projectKey);
    return (await this.deps.store.listProjectSegments(this.deps.db, project.id)).map(segmentView);
  }

  /** One segment; throws not-found. */
  async getSegment(projectKey: string, segmentKey: string): Promise<SegmentView> {
    const project = await this.deps.projects.getProject(projectKey);
    const segment = await this.deps.store.findSegment(this.deps.db, project.id, segmentKey);
    if (!segment) throw new AppError('not_found', message('segmentNotFound', { segmentKey, projectKey }));
    return segmentView(segment);
  }

  /** Creates a segment; name defaults to the key, match to `all`. */
  async createSegment(projectKey: string, key: string, values: SegmentValues, actor: Actor): Promise<SegmentView> {
    const project = await this.deps.projects.getProject(projectKey);
    const now = nowIso(this.deps.clock);
    const blank: StoredSegment = {
      id: newId(),
      projectId: project.id,
      key,
      name: key,
      description: '',
      match: 'all',
      conditions: [],
      createdAt: now,
      updatedAt: now,
    };
    const segment = applySegmentValues(blank, values, now);
    checkSegment(segment, 'body');
    await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      await this.deps.store.insertSegment(trx, segment, projectKey);
      await this.recordAndAnnounce(trx, emit, actor, project, null, segment);
    });
    return segmentView(segment);
  }

  /** Changes a segment (absent fields keep their value); every environment of the project sees it at once. */
  async updateSegment(projectKey: string, segmentKey: string, values: SegmentValues, actor: Actor): Promise<SegmentView> {
    const project = await this.deps.projects.getProject(projectKey);
    const updated = await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      const segment = await this.deps.store.findSegment(trx, project.id, segmentKey);
      if (!segment) throw new AppError('not_found', message('segmentNotFound', { segmentKey, projectKey }));
      const next = applySegmentValues(segment, values, nowIso(this.deps.clock));
      checkSegment(next, 'body');
      await this.deps.store.updateSegment(trx, next);
      await this.recordAndAnnounce(trx, emit, actor, project, segment, next);
      return next;
    });
    return segmentView(updated);
  }

  /** Deletes a segment; refused (409, naming them) while rules of any flag in any environment use it. */
  async deleteSegment(projectKey: string, segmentKey: string, actor: Actor): Promise<void> {
    const project = await this.deps.projects.getProject(projectKey);
    await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      const segment = await this.deps.store.findSegment(trx, project.id, segmentKey);
      if (!segment) throw new AppError('not_found', message('segmentNotFound', { segmentKey, projectKey }));
      await emit({ type: 'segment.deleting', projectId: project.id, segmentKey, environments: project.environments.map((e) => ({ id: e.id, name: e.name })) });
      await this.deps.store.deleteSegment(trx, segment.id);
      await this.recordAndAnnounce(trx, emit, actor, project, segment, null);
    });
  }

  /**
   * Creates or replaces segments within a caller's transaction (the flagd import), with an audit entry
   * for each one that changed; returns the keys that changed. The caller validates the whole environment.
   */
  async upsertSegments(trx: Executor, emit: Emit, project: Project, projectKey: string, segments: readonly Segment[], actor: Actor): Promise<string[]> {
    const now = nowIso(this.deps.clock);
    const existing = new Map((await this.deps.store.listProjectSegments(trx, project.id)).map((s) => [s.key, s]));
    const changed: string[] = [];
    for (const segment of segments) {
      const before = existing.get(segment.key);
      const values: SegmentValues = { name: segment.name, description: segment.description, match: segment.match, conditions: segment.conditions };
      if (before) {
        const next = applySegmentValues(before, values, now);
        if (Object.keys(changesOf(before, next, AUDITED)).length === 0) continue;
        await this.deps.store.updateSegment(trx, next);
        await this.recordAndAnnounce(trx, emit, actor, project, before, next);
      } else {
        const created = applySegmentValues(
          {
            id: newId(),
            projectId: project.id,
            key: segment.key,
            name: segment.key,
            description: '',
            match: 'all',
            conditions: [],
            createdAt: now,
            updatedAt: now,
          },
          values,
          now,
        );
        await this.deps.store.insertSegment(trx, created, projectKey);
        await this.recordAndAnnounce(trx, emit, actor, project, null, created);
      }
      changed.push(segment.key);
    }
    return changed;
  }

  /**
   * Deletes segments within a caller's transaction (flags as code), each audited; refused as deleteSegment
   * is while rules use one (the caller changes the flags first, in the same transaction).
   */
  async deleteSegmentsIn(trx: Executor, emit: Emit, project: Project, keys: readonly string[], actor: Actor): Promise<void> {
    const existing = new Map((await this.deps.store.listProjectSegments(trx, project.id)).map((s) => [s.key, s]));
    for (const key of keys) {
      const segment = existing.get(key);
      if (!segment) continue;
      await emit({
        type: 'segment.deleting',
        projectId: project.id,
        segmentKey: key,
        environments: project.environments.map((e) => ({ id: e.id, name: e.name })),
      });
      await this.deps.store.deleteSegment(trx, segment.id);
      await this.recordAndAnnounce(trx, emit, actor, project, segment, null);
    }
  }

  /** The engine's segments of a project, read within a caller's transaction. */
  async projectSegments(db: Executor, projectId: string): Promise<StoredSegment[]> {
    return this.deps.store.listProjectSegments(db, projectId);
  }

  private async recordAndAnnounce(
    trx: Executor,
    emit: Emit,
    actor: Actor,
    project: Project,
    before: StoredSegment | null,
    after: StoredSegment | null,
  ): Promise<void> {
    const key = (after ?? before)!.key;
    await this.deps.audit.record(trx, actor, {
      projectId: project.id,
      entity: 'segment',
      entityId: key,
      action: before === null ? 'segment.created' : after === null ? 'segment.deleted' : 'segment.updated',
      changes: changesOf(before, after, AUDITED),
    });
    await emit({ type: 'segment.changed', projectId: project.id, segmentKey: key, environmentIds: project.environments.map((e) => e.id) });
  }
}

/** The engine's check of a segment (operators, operands, limits), as a 400 naming the field. */
function checkSegment(segment: StoredSegment, at: string): void {
  const problem = segmentProblem({
    key: segment.key,
    name: segment.name,
    description: segment.description,
    match: segment.match,
    conditions: segment.conditions,
  });
  if (problem) throw AppError.validation([{ field: [at, ...problem.path.split('/').filter(Boolean)].join('.'), reason: problem.message }]);
}
