import { type Actor, type AuditLog, changesOf } from '../audit/index.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import { AppError, message, messages } from '../errors.ts';
import type { DomainEvents, Emit } from '../events/index.ts';
import { FLAG_CONFIG_FIELDS, type FlagConfig, flagConfig, type FlagService, type FlagValues } from '../flags/index.ts';
import { approvalsNeeded, type Environment, type Project, type ProjectService } from '../projects/index.ts';
import { segmentConfig, type SegmentService, type SegmentValues } from '../segments/index.ts';
import { approvalRefusal, canonicalJson, type ChangeAction, type ChangeStatus, differences, OPEN_STATUSES, refusalOf, statusAfter } from './change.ts';
import type { ChangeItem, ChangeOrigin, ChangeRequestRecord, ChangeStore } from './change.store.ts';
import type { ChangeNotifier } from './change.notifier.ts';

export interface ChangeRequestServiceDeps {
  db: Db;
  store: ChangeStore;
  projects: ProjectService;
  flags: FlagService;
  segments: SegmentService;
  audit: Pick<AuditLog, 'record'>;
  /** E-mails reviewers when a request waits for them, its author when it is approved or rejected. */
  notifier: Pick<ChangeNotifier, 'queue' | 'recipients'>;
  clock: () => Date;
  /** Announces `change_request.changed` after the commit (project webhooks deliver at once). */
  events: DomainEvents;
}

/** Changes as the admin API takes them: flags of the request's environment and segments of its project, PATCH semantics. */
export interface ChangeInputs {
  flags?: Array<{ slug: string; values: FlagValues }>;
  segments?: Array<{ key: string; values: SegmentValues }>;
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

const SEGMENT_FIELDS = ['name', 'description', 'match', 'conditions'] as const;

/** What a member may do to a change request besides applying and scheduling it (change-apply.service.ts). */
export class ChangeRequestService {
  constructor(private readonly deps: ChangeRequestServiceDeps) {}

  /** Creates a request of changes to one environment's flags and the project's segments, based on their current versions. */
  async create(projectKey: string, input: ChangeRequestInput, actor: Actor): Promise<ChangeRequestView> {
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, input.environment);
    const reviewers = input.submit ? await this.reviewersOf(actor) : [];
    const record = await this.deps.events.transaction(this.deps.db, (trx, emit) => this.createIn(trx, emit, { project, environment }, input, actor, reviewers));
    return this.view(projectKey, record.id);
  }

  /**
   * Who reviews a request by `actor` (the e-mails of a submitted one): read before the transaction
   * that opens it, since on SQLite a read outside a running transaction would wait for it.
   */
  async reviewersOf(actor: Actor): Promise<string[]> {
    return this.deps.notifier.recipients('review', { author: actor });
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
    await this.record(trx, actor, project, environment, record, 'change_request.created', {
      title: { after: record.title },
      status: { after: record.status },
      changes: { after: items.map((i) => `${i.kind} ${i.key}`) },
    });
    if (record.status === 'in_review') await this.deps.notifier.queue(trx, 'review', reviewers, record, project, environment);
    return record;
  }

  /** A request with its changes (and how each differs from the configuration as it is now), approvals and comments. */
  async view(projectKey: string, id: string): Promise<ChangeRequestView> {
    const { project, record } = await this.find(projectKey, id);
    return this.viewOf(project, record);
  }

  /** A project's requests, newest first: `open` (draft, in review, approved, scheduled) or of the statuses given. */
  async list(projectKey: string, statuses: readonly ChangeStatus[], limit: number): Promise<ChangeRequestSummary[]> {
    const project = await this.deps.projects.getProject(projectKey);
    const records = await this.deps.store.list(this.deps.db, project.id, statuses, limit);
    return Promise.all(
      records.map(async (r) => {
        const environment = environmentOf(project, r.environmentId);
        const items = await this.deps.store.items(this.deps.db, r.id);
        const approvals = await this.deps.store.approvals(this.deps.db, r.id);
        return { ...summaryOf(r, environment), approvals: approvals.length, changes: items.map((i) => ({ kind: i.kind, key: i.key })) };
      }),
    );
  }

  /** Changes the title, description or changes; changing the changes resets the approvals and bases them on the current versions. */
  async edit(projectKey: string, id: string, edit: ChangeRequestEdit, actor: Actor): Promise<ChangeRequestView> {
    const { project, environment, record } = await this.find(projectKey, id);
    this.check('edit', record, environment, 0);
    // Approvals are reset when the changes change: the reviewers look again (read before the transaction).
    const reviewers = edit.flags === undefined && edit.segments === undefined ? [] : await this.deps.notifier.recipients('review', record);
    const next = await this.deps.events.transaction(this.deps.db, (trx, emit) =>
      this.editIn(trx, emit, { project, environment }, record, edit, actor, reviewers),
    );
    return this.viewOf(project, next);
  }

  /**
   * The edit of `record` (as read by the caller) within the caller's transaction: the changes resolved
   * there, written only while the request still has the status it was read with. Changing the changes
   * resets the approvals (a new revision), and `reviewers` are e-mailed again.
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
    this.check('edit', record, environment, 0);
    const items =
      edit.flags === undefined && edit.segments === undefined
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
    await this.writeIn(trx, emit, record, next, async () => {
      if (items !== undefined) {
        await this.deps.store.replaceItems(trx, record.id, items);
        await this.deps.store.clearApprovals(trx, record.id);
      }
      const changes = changesOf(record, next, ['title', 'description', 'status', 'revision']);
      if (items !== undefined) changes.changes = { after: items.map((i) => `${i.kind} ${i.key}`) };
      await this.record(trx, actor, project, environment, next, 'change_request.updated', changes);
      await this.deps.notifier.queue(trx, 'review', again ? reviewers : [], next, project, environment);
    });
    return next;
  }

  /**
   * The open requests `origin` opened in a project (draft, in review, approved or scheduled): the newest
   * of each environment, read within the caller's transaction.
   */
  async openByOrigin(trx: Executor, project: Project, origin: ChangeOrigin): Promise<ChangeRequestRecord[]> {
    const seen = new Set<string>();
    return (await this.deps.store.listByOrigin(trx, project.id, origin, OPEN_STATUSES)).filter((r) => !seen.has(r.environmentId) && seen.add(r.environmentId));
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
    const open = (await this.openByOrigin(trx, project, options.origin)).find((r) => r.environmentId === environment.id);
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
    change: Required<ChangeInputs>,
  ): Promise<boolean> {
    const present = new Set((await this.deps.flags.environmentFlags(trx, target.environment.id)).map((f) => f.slug));
    // A flag that does not exist yet (a dry run of an apply that creates it) is in no request.
    if (change.flags.some((f) => !present.has(f.slug))) return false;
    const wanted = await this.resolve(target.project, target.environment, change, [], trx);
    const stored = await this.deps.store.items(trx, record.id);
    const keyed = (items: ChangeItem[]) => items.map((i) => canonicalJson({ kind: i.kind, key: i.key, baseVersion: i.baseVersion, config: i.config })).sort();
    return canonicalJson(keyed(wanted)) === canonicalJson(keyed(stored));
  }

  /** Draft -> in review (or approved when the environment needs no approval). */
  async submit(projectKey: string, id: string, actor: Actor): Promise<ChangeRequestView> {
    return this.transition(projectKey, id, 'submit', actor);
  }

  /**
   * One approval by a member (an editor or owner: the route checks the role) other than the author;
   * the request is approved once it has the approvals its environment needs.
   */
  async approve(projectKey: string, id: string, actor: Actor, member: { id: string; email: string } | null): Promise<ChangeRequestView> {
    const refusal = approvalRefusal(await this.authorOf(projectKey, id), { memberId: member?.id ?? null });
    if (refusal === 'not_member') throw new AppError('forbidden', messages.changeRequestApprover);
    if (refusal === 'own_request') throw new AppError('forbidden', messages.changeRequestOwnApproval);
    return this.transition(projectKey, id, 'approve', actor, member!);
  }

  async reject(projectKey: string, id: string, actor: Actor): Promise<ChangeRequestView> {
    return this.transition(projectKey, id, 'reject', actor);
  }

  async cancel(projectKey: string, id: string, actor: Actor): Promise<ChangeRequestView> {
    return this.transition(projectKey, id, 'cancel', actor);
  }

  async comment(projectKey: string, id: string, body: string, actor: Actor): Promise<ChangeRequestView> {
    const { project, environment, record } = await this.find(projectKey, id);
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.addComment(trx, record.id, { id: newId(), authorId: actor.id, authorLabel: actor.label, body, createdAt: nowIso(this.deps.clock) });
      await this.record(trx, actor, project, environment, record, 'change_request.commented', { comment: { after: body } });
    });
    return this.viewOf(project, record);
  }

  /** The request, its project and environment; throws not-found. */
  async find(projectKey: string, id: string): Promise<{ project: Project; environment: Environment; record: ChangeRequestRecord }> {
    const project = await this.deps.projects.getProject(projectKey);
    const record = await this.deps.store.find(this.deps.db, project.id, id);
    if (!record) throw new AppError('not_found', message('changeRequestNotFound', { id, projectKey }));
    return { project, environment: environmentOf(project, record.environmentId), record };
  }

  private async authorOf(projectKey: string, id: string): Promise<Actor> {
    return (await this.find(projectKey, id)).record.author;
  }

  private async transition(
    projectKey: string,
    id: string,
    action: ChangeAction,
    actor: Actor,
    member?: { id: string; email: string },
  ): Promise<ChangeRequestView> {
    const { project, environment, record } = await this.find(projectKey, id);
    const approvals = (await this.deps.store.approvals(this.deps.db, record.id)).length;
    const facts = { status: record.status, approvals, required: approvalsNeeded(environment) };
    this.check(action, record, environment, approvals);
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
    await this.write(record, next, async (trx) => {
      if (member) await this.deps.store.approve(trx, record.id, { userId: member.id, label: member.email, createdAt: next.updatedAt });
      await this.record(trx, actor, project, environment, next, `change_request.${pastOf[action]}`, changesOf(record, next, ['status']));
      if (notice) await this.deps.notifier.queue(trx, notice, recipients, next, project, environment);
    });
    return this.viewOf(project, next);
  }

  /** Throws the 409 of an action the request's state (or missing approvals) does not allow. */
  private check(action: ChangeAction, record: ChangeRequestRecord, environment: Environment, approvals: number): void {
    const refusal = refusalOf(action, { status: record.status, approvals, required: approvalsNeeded(environment) });
    if (refusal?.reason === 'state') throw new AppError('conflict', message('changeRequestState', { status: record.status, action: pastOf[action] }));
    if (refusal?.reason === 'approvals')
      throw new AppError('conflict', message('changeRequestApprovals', { approvals: refusal.approvals, required: refusal.required }));
  }

  /** Writes `next` only while the request still has the status it was read with (two members acting at once: one wins). */
  private async write(record: ChangeRequestRecord, next: ChangeRequestRecord, more: (trx: Executor) => Promise<void>): Promise<void> {
    await this.deps.events.transaction(this.deps.db, (trx, emit) => this.writeIn(trx, emit, record, next, more));
  }

  /** `write` within the caller's transaction. */
  private async writeIn(
    trx: Executor,
    emit: Emit,
    record: ChangeRequestRecord,
    next: ChangeRequestRecord,
    more: (trx: Executor) => Promise<void>,
  ): Promise<void> {
    if (!(await this.deps.store.update(trx, next, record.status))) {
      throw new AppError('conflict', message('changeRequestState', { status: 'changed meanwhile', action: 'changed' }));
    }
    await more(trx);
    await emit({ type: 'change_request.changed', projectId: next.projectId, changeRequestId: next.id });
  }

  private async record(
    trx: Executor,
    actor: Actor,
    project: Project,
    environment: Environment,
    record: ChangeRequestRecord,
    action: string,
    changes: Parameters<AuditLog['record']>[2]['changes'],
  ): Promise<void> {
    await this.deps.audit.record(trx, actor, {
      projectId: project.id,
      entity: 'change_request',
      entityId: record.id,
      environmentKey: environment.key,
      action,
      changes,
    });
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
    if (items.length === 0)
      throw AppError.validation([{ field: 'body.flags', reason: 'must change at least one flag or segment' }], messages.changeRequestEmpty);
    return items;
  }

  private async viewOf(project: Project, record: ChangeRequestRecord): Promise<ChangeRequestView> {
    const environment = environmentOf(project, record.environmentId);
    const items = await this.deps.store.items(this.deps.db, record.id);
    const approvals = await this.deps.store.approvals(this.deps.db, record.id);
    const comments = await this.deps.store.comments(this.deps.db, record.id);
    const changes = await Promise.all(
      items.map(async (item) => {
        if (item.kind === 'flag') {
          const flag = await this.deps.flags.findFlag(environment.id, item.key);
          const current = flag ? flagConfig(flag) : null;
          return {
            kind: item.kind,
            key: item.key,
            baseVersion: item.baseVersion,
            currentVersion: flag?.version ?? null,
            config: item.config,
            differences: current ? differences(current, item.config as unknown as FlagConfig, FLAG_CONFIG_FIELDS) : [],
          };
        }
        const segment = await this.deps.segments.findSegment(undefined, project.id, item.key);
        const current = segment ? segmentConfig(segment) : { name: null, description: null, match: null, conditions: null };
        return {
          kind: item.kind,
          key: item.key,
          baseVersion: item.baseVersion,
          currentVersion: segment?.version ?? null,
          config: item.config,
          differences: differences(current as Record<string, unknown>, item.config, SEGMENT_FIELDS),
        };
      }),
    );
    return {
      ...summaryOf(record, environment),
      requiredApprovals: approvalsNeeded(environment),
      approvals: approvals.map((a) => ({ userId: a.userId, label: a.label, at: a.createdAt })),
      changes: changes.map((c) => ({ ...c, conflict: record.status !== 'applied' && c.currentVersion !== c.baseVersion })),
      comments: comments.map((c) => ({ id: c.id, author: c.authorLabel, body: c.body, at: c.createdAt })),
    };
  }
}

function checkUnique(keys: string[], field: string): void {
  const twice = keys.find((k, i) => keys.indexOf(k) !== i);
  if (twice !== undefined) throw AppError.validation([{ field, reason: `${twice} is changed twice` }]);
}

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

export function environmentOf(project: Project, environmentId: string): Environment {
  const environment = project.environments.find((e) => e.id === environmentId);
  // Environments are deleted with their change requests (foreign key), so this cannot be missing.
  if (!environment) throw new AppError('not_found', message('adminEnvironmentNotFound', { environmentKey: environmentId, projectKey: project.key }));
  return environment;
}

export function summaryOf(r: ChangeRequestRecord, environment: Environment) {
  return {
    id: r.id,
    environment: { key: environment.key, name: environment.name },
    title: r.title,
    description: r.description,
    status: r.status,
    author: r.author.label,
    revision: r.revision,
    scheduledAt: r.scheduledAt,
    appliedAt: r.appliedAt,
    appliedLate: r.appliedLate,
    failure: r.failure,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export type ChangeRequestSummary = ReturnType<typeof summaryOf> & { approvals: number; changes: Array<{ kind: 'flag' | 'segment'; key: string }> };

export interface ChangeRequestView extends ReturnType<typeof summaryOf> {
  requiredApprovals: number;
  approvals: Array<{ userId: string; label: string; at: string }>;
  changes: Array<{
    kind: 'flag' | 'segment';
    key: string;
    baseVersion: number | null;
    currentVersion: number | null;
    config: Record<string, unknown>;
    differences: Array<{ field: string; from: unknown; to: unknown }>;
    conflict: boolean;
  }>;
  comments: Array<{ id: string; author: string; body: string; at: string }>;
}
