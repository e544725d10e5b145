import type { Actor, AuditLog, FieldChange } from '../audit/index.ts';
import type { Db, Executor } from '../db/database.ts';
import { AppError, message, messages } from '../errors.ts';
import type { DomainEvents, Emit } from '../events/index.ts';
import { type Flag, FLAG_CONFIG_FIELDS, type FlagConfig, flagConfig, type FlagService, type FlagValues } from '../flags/index.ts';
import type { ProposalOutcome, ProtectedEnvironmentChanges } from '../documents/index.ts';
import { approvalsNeeded, type Environment, type Project, type ProjectService } from '../projects/index.ts';
import type { SegmentValues } from '../segments/index.ts';
import { differences, type FieldDifference } from './change.ts';
import type { ChangeRequestService } from './change-request.service.ts';
import type { ChangeRequestView, ChangeRequestViews } from './change-request.views.ts';

export interface PromotionServiceDeps {
  db: Db;
  projects: ProjectService;
  flags: FlagService;
  requests: Pick<ChangeRequestService, 'createIn' | 'reviewersOf' | 'openByOrigin' | 'proposeIn'>;
  views: Pick<ChangeRequestViews, 'view'>;
  /** A flag's history: the audit entries of its writes, with the fields before and after. */
  audit: Pick<AuditLog, 'list'>;
  events: DomainEvents;
}

/** One flag of a comparison of two environments. */
export interface FlagComparison {
  slug: string;
  status: 'identical' | 'different' | 'missing';
  /** Where a missing flag is missing. */
  missingIn: 'from' | 'to' | null;
  differences: FieldDifference[];
  /** Segments the flag's rules use in each environment. */
  segments: { from: string[]; to: string[] };
}

/** What a promotion or a revert did: applied at once, or a change request where the target is protected. */
export interface ChangeOutcome {
  applied: string[];
  changeRequest: ChangeRequestView | null;
}

const segmentsOf = (f: Flag | undefined): string[] => [...new Set((f?.targeting.rules ?? []).flatMap((r) => r.segments))].sort();

/** The configuration as a change request's values (absent fields would keep what the target has). */
const valuesOf = (config: FlagConfig): FlagValues => ({ ...config, jsonLogic: config.jsonLogic ?? null, metadata: config.metadata ?? null });

/**
 * Compare and promote between environments, and revert from a flag's history (issue 24); and the change
 * requests flags as code opens for protected environments (issue 21), through the same path.
 */
export class PromotionService implements ProtectedEnvironmentChanges {
  constructor(private readonly deps: PromotionServiceDeps) {}

  /** Every flag of the project, environment `from` against `to`: identical, different (with each field), or missing in one. */
  async compare(projectKey: string, fromKey: string, toKey: string): Promise<FlagComparison[]> {
    const { environment: from } = await this.deps.projects.getEnvironment(projectKey, fromKey);
    const { environment: to } = await this.deps.projects.getEnvironment(projectKey, toKey);
    const a = new Map((await this.deps.flags.environmentFlags(undefined, from.id)).map((f) => [f.slug, f]));
    const b = new Map((await this.deps.flags.environmentFlags(undefined, to.id)).map((f) => [f.slug, f]));
    const slugs = [...new Set([...a.keys(), ...b.keys()])].sort();
    return slugs.map((slug) => {
      const x = a.get(slug);
      const y = b.get(slug);
      const segments = { from: segmentsOf(x), to: segmentsOf(y) };
      if (!x || !y) return { slug, status: 'missing', missingIn: x ? 'to' : 'from', differences: [], segments };
      const diff = differences(flagConfig(x), flagConfig(y), FLAG_CONFIG_FIELDS);
      return { slug, status: diff.length === 0 ? 'identical' : 'different', missingIn: null, differences: diff, segments };
    });
  }

  /**
   * Gives the flags `slugs` of environment `fromKey` the same configuration in `toKey`, in one audited
   * transaction (any refusal changes nothing); a change request, submitted for review, when `toKey` is protected.
   */
  async promote(projectKey: string, input: { from: string; to: string; flags: string[]; title?: string }, actor: Actor): Promise<ChangeOutcome> {
    if (input.from === input.to) throw AppError.validation([{ field: 'body.to', reason: 'must differ from body.from' }], messages.promoteSameEnvironment);
    const { project, environment: from } = await this.deps.projects.getEnvironment(projectKey, input.from);
    const { environment: to } = await this.deps.projects.getEnvironment(projectKey, input.to);
    const source = new Map((await this.deps.flags.environmentFlags(undefined, from.id)).map((f) => [f.slug, f]));
    const configs = input.flags.map((slug) => {
      const flag = source.get(slug);
      if (!flag) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
      return { slug, config: flagConfig(flag) };
    });
    const title = input.title ?? `Promote ${input.flags.join(', ')} from ${from.name} to ${to.name}`;
    return this.change(project.key, to.key, title, configs, actor, { promotedFrom: { after: from.key } });
  }

  /**
   * Restores a flag's configuration in one environment from its history, as a new change: before one
   * change (`auditId`, the fields that entry changed), or as it was at `since` (every change after it
   * undone, newest first). A change request where the environment is protected.
   */
  async revert(
    projectKey: string,
    envKey: string,
    slug: string,
    input: { auditId?: string; since?: string; title?: string },
    actor: Actor,
  ): Promise<ChangeOutcome> {
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, envKey);
    const flag = await this.deps.flags.findFlag(environment.id, slug);
    if (!flag) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
    const history = await this.history(projectKey, envKey, slug, input.since);
    let undo: typeof history;
    if (input.auditId !== undefined) {
      const entry = history.find((e) => e.id === input.auditId);
      if (!entry) throw new AppError('not_found', message('auditEntryNotFound', { id: input.auditId, slug }));
      undo = [entry];
    } else {
      const since = new Date(input.since ?? '').toISOString();
      undo = history.filter((e) => e.at > since);
    }
    if (undo.length === 0) throw new AppError('conflict', messages.revertNothing);
    const config: Record<string, unknown> = { ...flagConfig(flag) };
    // Newest first: each entry's `before` is what the one after it found.
    for (const entry of undo) {
      for (const field of FLAG_CONFIG_FIELDS) {
        const change = entry.changes[field];
        if (change && 'before' in change) config[field] = change.before;
      }
    }
    const what = input.auditId !== undefined ? `change ${input.auditId}` : `changes since ${input.since}`;
    const title = input.title ?? `Revert ${what} of ${slug} in ${environment.name}`;
    const note: Record<string, FieldChange> = input.auditId !== undefined ? { revertOf: { after: input.auditId } } : { revertSince: { after: input.since } };
    return this.change(project.key, environment.key, title, [{ slug, config: config as unknown as FlagConfig }], actor, note);
  }

  /** The flag's writes in one environment, newest first (since `since` when given). */
  private async history(projectKey: string, envKey: string, slug: string, since: string | undefined) {
    const entries: Array<{ id: string; at: string; changes: Record<string, FieldChange> }> = [];
    let after: Parameters<AuditLog['list']>[1]['after'];
    for (;;) {
      const page = await this.deps.audit.list(
        { projectKey, entity: 'flag', entityId: slug, ...(since ? { since: new Date(since).toISOString() } : {}) },
        { after, limit: 200 },
      );
      for (const e of page.items) if (e.environmentKey === envKey && e.action === 'flag.updated') entries.push(e);
      if (!page.next) return entries;
      after = page.next;
    }
  }

  /** Applies the configurations now, in one transaction, or proposes them in a submitted change request when the environment is protected. */
  private async change(
    projectKey: string,
    envKey: string,
    title: string,
    configs: Array<{ slug: string; config: FlagConfig }>,
    actor: Actor,
    note: Record<string, FieldChange>,
  ): Promise<ChangeOutcome> {
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, envKey);
    const reviewers = approvalsNeeded(environment) > 0 ? await this.deps.requests.reviewersOf(project, actor) : [];
    const outcome = await this.deps.events.transaction(this.deps.db, (trx, emit) =>
      this.changeIn(trx, emit, { project, environment }, { title, flags: configs }, actor, note, reviewers),
    );
    return {
      applied: outcome.applied,
      changeRequest: outcome.changeRequestId === null ? null : await this.deps.views.view(projectKey, outcome.changeRequestId),
    };
  }

  /**
   * The one path of a promotion or a revert, within the caller's transaction: the flags' whole
   * configurations written now, or, when the environment is protected, a change request of them,
   * submitted for review.
   */
  private async changeIn(
    trx: Executor,
    emit: Emit,
    target: { project: Project; environment: Environment },
    change: { title: string; flags: Array<{ slug: string; config: FlagConfig }> },
    actor: Actor,
    note: Record<string, FieldChange>,
    reviewers: string[],
  ): Promise<{ applied: string[]; changeRequestId: string | null }> {
    const { project, environment } = target;
    if (approvalsNeeded(environment) > 0) {
      const record = await this.deps.requests.createIn(
        trx,
        emit,
        target,
        {
          environment: environment.key,
          title: change.title,
          flags: change.flags.map(({ slug, config }) => ({ slug, values: valuesOf(config) })),
          submit: true,
        },
        actor,
        reviewers,
      );
      return { applied: [], changeRequestId: record.id };
    }
    for (const { slug, config } of change.flags) await this.deps.flags.applyConfig(trx, emit, { project, environment }, slug, config, undefined, actor, note);
    return { applied: change.flags.map((c) => c.slug), changeRequestId: null };
  }

  // Flags as code's port (ProtectedEnvironmentChanges in flags/): a document's changes to a protected
  // environment become a change request of whole configurations, opened once and kept or updated by the
  // applies after it (ChangeRequestService.proposeIn, origin 'flags_as_code').

  /** Who reviews a change request by `actor` in `project`; read before the apply's transaction. */
  async reviewersOf(project: Project, actor: Actor): Promise<string[]> {
    return this.deps.requests.reviewersOf(project, actor);
  }

  /**
   * A change request of these flags' whole configurations, opened and submitted within the caller's
   * transaction: the values a new flag asks for in a protected environment, where it starts switched
   * off (FlagService.createFlag's port, issue 29 item 2).
   */
  async openIn(
    trx: Executor,
    emit: Emit,
    target: { project: Project; environment: Environment },
    change: { title: string; flags: Array<{ slug: string; config: FlagConfig }> },
    actor: Actor,
    reviewers: string[],
  ): Promise<{ id: string }> {
    const flags = change.flags.map(({ slug, config }) => ({ slug, values: valuesOf(config) }));
    const input = { environment: target.environment.key, title: change.title, flags, submit: true };
    const record = await this.deps.requests.createIn(trx, emit, target, input, actor, reviewers);
    return { id: record.id };
  }

  /** The open change requests applies opened in the project, the newest of each environment. */
  async openRequests(trx: Executor, project: Project): Promise<Array<{ environmentId: string; id: string; title: string }>> {
    return (await this.deps.requests.openByOrigin(trx, project, 'flags_as_code')).map((r) => ({ environmentId: r.environmentId, id: r.id, title: r.title }));
  }

  /**
   * The environment's change request of these configurations, within the caller's transaction: opened
   * and submitted, or the open one an earlier apply opened, kept as it is or updated (a dry run writes nothing).
   */
  async propose(
    trx: Executor,
    emit: Emit,
    target: { project: Project; environment: Environment },
    change: { title: string; flags: Array<{ slug: string; config: FlagConfig }>; segments: Array<{ key: string; config: Required<SegmentValues> }> },
    actor: Actor,
    reviewers: string[],
    dryRun: boolean,
  ): Promise<{ id: string | null; outcome: ProposalOutcome }> {
    if (approvalsNeeded(target.environment) === 0) throw new Error(`environment ${target.environment.key} is not protected: nothing to propose`);
    return this.deps.requests.proposeIn(
      trx,
      emit,
      target,
      {
        title: change.title,
        flags: change.flags.map(({ slug, config }) => ({ slug, values: valuesOf(config) })),
        segments: change.segments.map(({ key, config }) => ({ key, values: config })),
      },
      actor,
      reviewers,
      { origin: 'flags_as_code', dryRun },
    );
  }
}
