import { type Actor, type AuditLog, changesOf } from '../audit/index.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import { AppError, messages } from '../errors.ts';
import type { DomainEvents, Emit } from '../events/index.ts';
import type { FlagService, FlagValues } from '../flags/index.ts';
import { approvalsNeeded, type Environment, type Project, type ProjectService } from '../projects/index.ts';
import { segmentConfig, type SegmentService, type SegmentValues } from '../segments/index.ts';
import { segmentProblem } from '../targeting/index.ts';
import { canonicalJson, OPEN_STATUSES, sameActor, statusAfter } from './change.ts';
import type { ChangeItem, ChangeOrigin, ChangeRequestRecord, ChangeStore } from './change.store.ts';
import type { ChangeNotifier } from './change.notifier.ts';
import type { ChangeRequestView, ChangeRequestViews } from './change-request.views.ts';
import { checkAction, recordRequestEntry, writeRequestIn } from './change-request.writes.ts';
import type { ReleasePlanInput, ReleasePlans } from './release-plans.ts';

export interface ChangeRequestServiceDeps {
  db: Db;
  store: ChangeStore;
  projects: ProjectService;
  flags: Pick<FlagService, 'proposeConfig' | 'environmentFlags'>;
  segments: Pick<SegmentService, 'findSegment'>;
  views: ChangeRequestViews;
  audit: Pick<AuditLog, 'record'>;
  /** E-mails reviewers when a request waits for them, its author when it is approved or rejected. */
  notifier: Pick<ChangeNotifier, 'queue' | 'recipients'>;
  clock: () => Date;
  /** Announces `change_request.changed` after the commit (project webhooks deliver at once). */
  events: DomainEvents;
  /** Release plans a request may carry (issue 33): checked when proposed, started when applied. */
  releases: Pick<ReleasePlans, 'resolvePlan'>;
}

/** Changes as the admin API takes them: flags of the request's environment and segments of its project, PATCH semantics. */
export interface ChangeInputs {
  flags?: Array<{ slug: string; values: FlagValues }>;
  segments?: Array<{ key: string; values: SegmentValues }>;
  /** Releases to start in the request's environment (issue 33): the plan is what is approved. */
  releases?: Array<{ slug: string; plan: ReleasePlanInput }>;
}

export interface ChangeRequestInput extends ChangeInputs {
  environment: string;
  title: string;
  description?: string;
  /** Submit for review at once (default: stays a draft). */
  submit?: boolean;
}

export interface ChangeRequestEdit extends ChangeInputs {
  title?: string;
  description?: string;
}

/**
 * The writing of change requests (issue 24): opened by a member, a promotion, a revert or flags as
 * code, and edited, each edit of the changes a new revision whose author is recorded (issue 29 item 1).
 * Review: change-review.service.ts; reads: change-request.views.ts; application: change-apply.service.ts.
 */
export class ChangeRequestService {
  constructor(private readonly deps: ChangeRequestServiceDeps) {}

  /** Creates a request of changes to one environment's flags and the project's segments, based on their current versions. */
  async create(projectKey: string, input: ChangeRequestInput, actor: Actor): Promise<ChangeRequestView> {
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, input.environment);
    const reviewers = input.submit ? await this.reviewersOf(project, actor) : [];
    await this.checkReleases({ project, environment }, input);
    const record = await this.deps.events.transaction(this.deps.db, (trx, emit) => this.createIn(trx, emit, { project, environment }, input, actor, reviewers));
    return this.deps.views.view(projectKey, record.id);
  }

  /**
   * Who reviews a request by `actor` (the e-mails of a submitted one): read before the transaction
   * that opens it, since on SQLite a read outside a running transaction would wait for it.
   */
  async reviewersOf(project: Project, actor: Actor): Promise<string[]> {
    return this.deps.notifier.recipients('review', { author: actor, projectId: project.id });
  }

  /**
   * Creates a request within the caller's transaction, based on the versions read in it (so that it may
   * propose flags the same transaction created: flags as code). `reviewers` from `reviewersOf`; `origin`
   * names the feature that opens it on someone's behalf and finds it again (proposeIn).
   */
  async createIn(
    trx: Executor,
    emit: Emit,
    target: { project: Project; environment: Environment },
    input: ChangeRequestInput,
    actor: Actor,
    reviewers: string[],
    origin: ChangeOrigin | null = null,
  ): Promise<ChangeRequestRecord> {
    const { project, environment } = target;
    const items = await this.resolve(project, environment, input, [], trx);
    const now = nowIso(this.deps.clock);
    const record: ChangeRequestRecord = {
      id: newId(),
      projectId: project.id,
      environmentId: environment.id,
      title: input.title.trim(),
      description: input.description ?? '',
      status: 'draft',
      author: actor,
      revision: 1,
      scheduledAt: null,
      scheduledBy: null,
      appliedAt: null,
      appliedLate: false,
      failure: null,
      createdAt: now,
      updatedAt: now,
      origin,
    };
    if (input.submit) record.status = statusAfter('submit', { status: 'draft', approvals: 0, required: approvalsNeeded(environment) });
    await this.deps.store.insert(trx, record, items);
    await emit({ type: 'change_request.changed', projectId: project.id, changeRequestId: record.id });
    await recordRequestEntry(this.deps.audit, trx, actor, target, record, 'change_request.created', {
      title: { after: record.title },
      status: { after: record.status },
      changes: { after: items.map((i) => `${i.kind} ${i.key}`) },
    });
    if (record.status === 'in_review') await this.deps.notifier.queue(trx, 'review', reviewers, record, project, environment);
    return record;
  }

  /** Changes the title, description or changes; changing the changes resets the approvals and bases them on the current versions. */
  async edit(projectKey: string, id: string, edit: ChangeRequestEdit, actor: Actor): Promise<ChangeRequestView> {
    const { project, environment, record } = await this.deps.views.find(projectKey, id);
    checkAction('edit', record, environment, 0);
    // Approvals are reset when the changes change: the reviewers look again (read before the transaction).
    const reviewers =
      edit.flags === undefined && edit.segments === undefined && edit.releases === undefined ? [] : await this.deps.notifier.recipients('review', record);
    await this.checkReleases({ project, environment }, edit);
    const next = await this.deps.events.transaction(this.deps.db, (trx, emit) =>
      this.editIn(trx, emit, { project, environment }, record, edit, actor, reviewers),
    );
    return this.deps.views.viewOf(project, next);
  }

  /**
   * The edit of `record` (as read by the caller) within the caller's transaction: the changes resolved
   * there, written only while the request still has the status it was read with. Changing the changes
   * resets the approvals (a new revision, by `actor`), and `reviewers` are e-mailed again.
   */
  async editIn(
    trx: Executor,
    emit: Emit,
    target: { project: Project; environment: Environment },
    record: ChangeRequestRecord,
    edit: ChangeRequestEdit,
    actor: Actor,
    reviewers: string[],
  ): Promise<ChangeRequestRecord> {
    const { project, environment } = target;
    checkAction('edit', record, environment, 0);
    const items =
      edit.flags === undefined && edit.segments === undefined && edit.releases === undefined
        ? undefined
        : await this.resolve(project, environment, edit, await this.deps.store.items(trx, record.id), trx);
    const next: ChangeRequestRecord = {
      ...record,
      title: edit.title?.trim() ?? record.title,
      description: edit.description ?? record.description,
      updatedAt: nowIso(this.deps.clock),
    };
    if (items !== undefined) {
      next.revision = record.revision + 1;
      next.status = statusAfter('edit', { status: record.status, approvals: 0, required: approvalsNeeded(environment) });
      if (next.status !== 'scheduled') next.scheduledAt = null;
      next.failure = null;
    }
    const again = next.status === 'in_review' && record.status !== 'draft' && items !== undefined;
    await writeRequestIn(this.deps.store, trx, emit, record, next, async () => {
      if (items !== undefined) {
        await this.deps.store.replaceItems(trx, record.id, items);
        const cleared = await this.deps.store.clearApprovals(trx, record.id);
        await this.deps.store.addRevision(trx, record.id, { revision: next.revision, author: actor, approvalsReset: cleared > 0 }, next.updatedAt);
      }
      const changes = changesOf(record, next, ['title', 'description', 'status', 'revision']);
      if (items !== undefined) changes.changes = { after: items.map((i) => `${i.kind} ${i.key}`) };
      await recordRequestEntry(this.deps.audit, trx, actor, target, next, 'change_request.updated', changes);
      await this.deps.notifier.queue(trx, 'review', again ? reviewers : [], next, project, environment);
    });
    return next;
  }

  /**
   * The open requests `origin` opened in a project (draft, in review, approved or scheduled): the newest
   * of each environment, read within the caller's transaction; with `author`, only those it opened.
   */
  async openByOrigin(trx: Executor, project: Project, origin: ChangeOrigin, author?: Actor): Promise<ChangeRequestRecord[]> {
    const seen = new Set<string>();
    return (await this.deps.store.listByOrigin(trx, project.id, origin, OPEN_STATUSES))
      .filter((r) => author === undefined || sameActor(r.author, author))
      .filter((r) => !seen.has(r.environmentId) && seen.add(r.environmentId));
  }

  /**
   * A request of `change` for a feature that proposes on someone's behalf and finds its request again
   * (flags as code, docs/adr/0038-flags-as-code.md), within the caller's transaction. Without an open
   * request of `origin` in the environment, one is opened and submitted. With one (the newest), it is
   * kept as it is when it already proposes exactly these changes, each based on the version there now;
   * otherwise it is edited to them through the edit path (a new revision: approvals reset, recorded).
   * A dry run answers what would happen and writes nothing.
   */
  async proposeIn(
    trx: Executor,
    emit: Emit,
    target: { project: Project; environment: Environment },
    change: { title: string; flags: Array<{ slug: string; values: FlagValues }>; segments: Array<{ key: string; values: SegmentValues }> },
    actor: Actor,
    reviewers: string[],
    options: { origin: ChangeOrigin; dryRun: boolean },
  ): Promise<{ id: string | null; outcome: 'opened' | 'updated' | 'unchanged' }> {
    const { project, environment } = target;
    // Only a request the same actor opened is kept or edited: an apply by someone else opens its own
    // request instead of rewriting another's (issue 29 item 1).
    const open = (await this.openByOrigin(trx, project, options.origin, actor)).find((r) => r.environmentId === environment.id);
    if (!open) {
      if (options.dryRun) return { id: null, outcome: 'opened' };
      const input = { environment: environment.key, title: change.title, flags: change.flags, segments: change.segments, submit: true };
      const record = await this.createIn(trx, emit, target, input, actor, reviewers, options.origin);
      return { id: record.id, outcome: 'opened' };
    }
    if (await this.proposes(trx, target, open, change)) return { id: open.id, outcome: 'unchanged' };
    if (!options.dryRun) await this.editIn(trx, emit, target, open, change, actor, reviewers);
    return { id: open.id, outcome: 'updated' };
  }

  /** True when `record` holds exactly the items `change` resolves to now (configurations and the versions they are based on). */
  private async proposes(
    trx: Executor,
    target: { project: Project; environment: Environment },
    record: ChangeRequestRecord,
    change: Required<Pick<ChangeInputs, 'flags' | 'segments'>>,
  ): Promise<boolean> {
    const present = new Set((await this.deps.flags.environmentFlags(trx, target.environment.id)).map((f) => f.slug));
    // A flag that does not exist yet (a dry run of an apply that creates it) is in no request.
    if (change.flags.some((f) => !present.has(f.slug))) return false;
    const wanted = await this.resolve(target.project, target.environment, change, [], trx);
    const stored = await this.deps.store.items(trx, record.id);
    const keyed = (items: ChangeItem[]) => items.map((i) => canonicalJson({ kind: i.kind, key: i.key, baseVersion: i.baseVersion, config: i.config })).sort();
    return canonicalJson(keyed(wanted)) === canonicalJson(keyed(stored));
  }

  /**
   * Checks the release plans of `input` with the project's metrics, before the transaction that writes
   * the request (the metrics are read outside it); within it they are resolved again, from the same rows.
   */
  private async checkReleases(target: { project: Project; environment: Environment }, input: ChangeInputs): Promise<void> {
    for (const [i, release] of (input.releases ?? []).entries()) {
      await this.deps.releases.resolvePlan(undefined, target, release.slug, release.plan, { checkMetrics: true, field: `body.releases.${i}.plan` });
    }
  }

  /** The whole configuration after each change, with the version it is based on; a kind not given keeps `current`'s items. */
  private async resolve(project: Project, environment: Environment, input: ChangeInputs, current: ChangeItem[], trx?: Executor): Promise<ChangeItem[]> {
    const items: ChangeItem[] = [];
    if (input.segments === undefined) items.push(...current.filter((i) => i.kind === 'segment'));
    else {
      checkUnique(
        input.segments.map((s) => s.key),
        'body.segments',
      );
      for (const [i, change] of input.segments.entries()) {
        const before = await this.deps.segments.findSegment(trx, project.id, change.key);
        const base = before ? segmentConfig(before) : { name: change.key, description: '', match: 'all' as const, conditions: [] };
        const config = { ...base, ...change.values };
        if (config.conditions.length === 0)
          throw AppError.validation([{ field: `body.segments.${i}.values.conditions`, reason: 'a new segment needs conditions' }]);
        // Checked as a segment write checks it, so that a request never holds what applying would refuse.
        const problem = segmentProblem({ key: change.key, ...config });
        if (problem) {
          throw AppError.validation([{ field: [`body.segments.${i}.values`, ...problem.path.split('/').filter(Boolean)].join('.'), reason: problem.message }]);
        }
        items.push({ kind: 'segment', key: change.key, baseVersion: before?.version ?? null, config });
      }
    }
    if (input.flags === undefined) items.push(...current.filter((i) => i.kind === 'flag'));
    else {
      checkUnique(
        input.flags.map((f) => f.slug),
        'body.flags',
      );
      for (const [i, change] of input.flags.entries()) {
        const { baseVersion, config } = await this.deps.flags.proposeConfig(
          environment,
          project.key,
          change.slug,
          change.values,
          `body.flags.${i}.values`,
          trx,
        );
        items.push({ kind: 'flag', key: change.slug, baseVersion, config: { ...config } });
      }
    }
    if (input.releases === undefined) items.push(...current.filter((i) => i.kind === 'release'));
    else {
      checkUnique(
        input.releases.map((r) => r.slug),
        'body.releases',
      );
      for (const [i, release] of input.releases.entries()) {
        const plan = await this.deps.releases.resolvePlan(trx, { project, environment }, release.slug, release.plan, {
          checkMetrics: false,
          field: `body.releases.${i}.plan`,
        });
        items.push({ kind: 'release', key: release.slug, baseVersion: null, config: { ...plan } });
      }
    }
    if (items.length === 0)
      throw AppError.validation([{ field: 'body.flags', reason: 'must change at least one flag or segment' }], messages.changeRequestEmpty);
    return items;
  }
}

function checkUnique(keys: string[], field: string): void {
  const twice = keys.find((k, i) => keys.indexOf(k) !== i);
  if (twice !== undefined) throw AppError.validation([{ field, reason: `${twice} is changed twice` }]);
}
