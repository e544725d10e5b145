import { type Actor, type AuditLog, type FieldChange } from '../audit/index.ts';
import { newId } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { DomainEvents, Emit } from '../events/index.ts';
import { type Flag, flagConfig, type FlagService } from '../flags/index.ts';
import type { MailSender, WebhookTargetRule } from '../delivery/index.ts';
import { approvalsNeeded, checkWritable, type Environment, type Project, type ProjectService, type WriteOptions } from '../projects/index.ts';
import type { GuardrailData, GuardrailView } from './guardrail-readers.ts';
import {
  ACTIVE_STATUSES,
  type Guardrail,
  pauseProgress,
  planProblems,
  releaseRule,
  releaseRuleId,
  type ReleaseStatus,
  type ReleaseStep,
  resumeProgress,
} from './release.ts';
import type { Release, ReleaseStore } from './release.store.ts';
import { releaseView } from './release-view.ts';

export interface ReleaseServiceDeps {
  db: Db;
  store: ReleaseStore;
  projects: ProjectService;
  /** The flag write door: the release's rule is written like any flag change (audit, announcements). */
  flags: Pick<FlagService, 'findFlag' | 'environmentFlags' | 'applyConfig'>;
  events: DomainEvents;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
  /** The experiments' metrics (a metric guardrail must name one of the project's). */
  data: Pick<GuardrailData, 'metricOf'>;
  /** FLAGPOST_WEBHOOK_TARGETS, which Prometheus URLs obey. */
  targets: WebhookTargetRule;
  /** Undefined when SMTP_URL is not set: no e-mail is queued. */
  mail: Pick<MailSender, 'send'> | undefined;
  /** The creator's address (a rollback is e-mailed to them). */
  accounts: { getUser(id: string): Promise<{ email: string }> };
  publicUrl: string;
}

/** A release plan as POST .../releases takes it; absent parts come from the named template. */
export interface ReleasePlanInput {
  variant: string;
  baseline: string;
  steps?: ReleaseStep[];
  guardrails?: Guardrail[];
  template?: string;
}

/** A plan with its template's parts filled in and checked: what a release runs and a change request approves. */
export interface ResolvedPlan {
  variant: string;
  baseline: string;
  steps: ReleaseStep[];
  guardrails: Guardrail[];
  template?: string;
}

/** The actor of the guard's own moves, as the audit log and webhooks show it. */
export const RELEASE_GUARD: Actor = { type: 'system', id: null, label: 'release guard' };

/** What a move does to the flag: serve the variant to a share, or end the release on one variant. */
export type FlagEffect = { kind: 'percent'; percent: number } | { kind: 'end'; serve: string } | undefined;

/** One change of a release: its next state, what the flag does, the audit entry, and whether its creator is told. */
export interface Transition {
  next: Release;
  flag: FlagEffect;
  action: string;
  changes: Record<string, FieldChange>;
  notifyCreator?: boolean;
}

class LostRace extends Error {}

const PAST = { approve: 'approved', pause: 'paused', resume: 'resumed', rollback: 'rolled back', cancel: 'cancelled' } as const;

const sameActor = (a: Actor, b: Actor) => a.type === b.type && a.id === b.id && (a.id !== null || a.label === b.label);

/**
 * Release plans of a flag in one environment (issue 33): start, read, and the people's moves (approve,
 * pause, resume, roll back, cancel). Every move, the guard's included (`apply`), is one transaction that
 * updates the release conditionally on the version it read and writes the flag through `applyConfig`
 * with the flag's version, so that a move happens once whoever else decides it at the same time.
 */
export class ReleaseService {
  constructor(private readonly deps: ReleaseServiceDeps) {}

  /** A release as the API answers it, with what it waits for now. */
  view(release: Release) {
    return releaseView(release, this.deps.clock());
  }

  private now(): string {
    return this.deps.clock().toISOString();
  }

  private async scope(projectKey: string, environmentKey: string, slug: string): Promise<{ project: Project; environment: Environment; flag: Flag }> {
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    const flag = await this.deps.flags.findFlag(environment.id, slug);
    if (!flag) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
    return { project, environment, flag };
  }

  /** Checks a plan's steps and guardrails against the project (metrics) and the instance (Prometheus targets). */
  async checkGuardrails(project: Project, guardrails: Guardrail[], field = 'body'): Promise<void> {
    for (const [index, g] of guardrails.entries()) {
      if ('prometheus' in g) {
        const reason = this.deps.targets.refusal(g.prometheus.url);
        if (reason)
          throw AppError.validation([{ field: `${field}.guardrails[${index}].prometheus.url`, reason }], message('releaseTargetRefused', { index, reason }));
      } else if (!(await this.deps.data.metricOf(project.id, g.metric))) {
        throw AppError.validation(
          [{ field: `${field}.guardrails[${index}].metric`, reason: `no metric ${g.metric}` }],
          message('releaseMetricNotFound', { index, metricKey: g.metric, projectKey: project.key }),
        );
      }
    }
  }

  /** Starts a release of `slug` (409 while another is active; 409 in a protected environment unless an owner bypasses: propose it in a change request). */
  async start(projectKey: string, environmentKey: string, slug: string, input: ReleasePlanInput, actor: Actor, options: WriteOptions = {}): Promise<Release> {
    const { project, environment } = await this.scope(projectKey, environmentKey, slug);
    checkWritable(environment, projectKey, options);
    const plan = await this.resolvePlan(undefined, { project, environment }, slug, input, { checkMetrics: true });
    const bypassed = options.bypassProtection === true && environment.protected;
    return this.deps.events.transaction(this.deps.db, (trx, emit) =>
      this.startIn(trx, emit, { project, environment }, slug, plan, actor, { note: bypassed ? { protectionBypassed: { after: true } } : {} }),
    );
  }

  /**
   * The plan `input` for `slug`, its template's parts filled in (what a change request approves), checked
   * against the flag's variants and, with `checkMetrics`, the project's metrics and the instance's
   * Prometheus targets: 400 naming each problem under `field` (`body`, or where a change request holds it).
   * Reads within `trx` when given (the metrics are then not read: they are read outside transactions).
   */
  async resolvePlan(
    trx: Executor | undefined,
    target: { project: Project; environment: Environment },
    slug: string,
    input: ReleasePlanInput,
    options: { checkMetrics: boolean; field?: string },
  ): Promise<ResolvedPlan> {
    const { project, environment } = target;
    const field = options.field ?? 'body';
    const flag = (await this.deps.flags.environmentFlags(trx, environment.id)).find((f) => f.slug === slug);
    if (!flag) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey: project.key }));
    let steps = input.steps;
    let guardrails = input.guardrails;
    if (input.template !== undefined) {
      const template = await this.deps.store.findTemplate(trx ?? this.deps.db, project.id, input.template);
      if (!template) throw new AppError('not_found', message('releaseTemplateNotFound', { templateKey: input.template, projectKey: project.key }));
      steps ??= template.steps;
      guardrails ??= template.guardrails;
    }
    const plan: ResolvedPlan = {
      variant: input.variant,
      baseline: input.baseline,
      steps: steps ?? [],
      guardrails: guardrails ?? [],
      ...(input.template !== undefined ? { template: input.template } : {}),
    };
    const problems = planProblems(plan, Object.keys(flag.targeting.variants));
    if (problems.length > 0) {
      throw AppError.validation(
        problems.map((p) => {
          const at = p.indexOf(': ');
          return { field: `${field}.${p.slice(0, at)}`, reason: p.slice(at + 2) };
        }),
      );
    }
    if (options.checkMetrics) await this.checkGuardrails(project, plan.guardrails, field);
    return plan;
  }

  /**
   * Starts a resolved plan within the caller's transaction (the admin route's, or a change request's
   * application): the release row (409 while another is active), its rule at the first step's share
   * unless that step waits for an approval, and the audit entries with `note`. `createdBy` (default
   * `actor`) is told of a rollback and may not approve its steps where approvals are required.
   */
  async startIn(
    trx: Executor,
    emit: Emit,
    target: { project: Project; environment: Environment },
    slug: string,
    plan: ResolvedPlan,
    actor: Actor,
    options: { createdBy?: Actor; note?: Record<string, FieldChange> } = {},
  ): Promise<Release> {
    const { project, environment } = target;
    const flag = (await this.deps.flags.environmentFlags(trx, environment.id)).find((f) => f.slug === slug);
    if (!flag) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey: project.key }));
    // The flag may have changed since the plan was approved: its variants are checked again.
    const problems = planProblems(plan, Object.keys(flag.targeting.variants));
    if (problems.length > 0) throw AppError.validation(problems.map((p) => ({ field: p.slice(0, p.indexOf(': ')), reason: p.slice(p.indexOf(': ') + 2) })));
    const now = this.now();
    const waits = plan.steps[0]!.approval === true;
    const release: Release = {
      id: newId(),
      projectId: project.id,
      environmentId: environment.id,
      flagSlug: slug,
      status: waits ? 'waiting_approval' : 'running',
      variant: plan.variant,
      baseline: plan.baseline,
      steps: plan.steps,
      progress: plan.steps.map((_, i) => (i === 0 && !waits ? { startedAt: now } : {})),
      currentStep: 0,
      guardrails: plan.guardrails,
      readings: [],
      templateKey: plan.template ?? null,
      rolledBackReason: null,
      createdBy: options.createdBy ?? actor,
      createdAt: now,
      updatedAt: now,
      version: 1,
    };
    const note = options.note ?? {};
    await this.deps.store.insert(trx, release, environment.name);
    await emit({ type: 'release.changed', projectId: project.id, environmentId: environment.id, releaseId: release.id, status: release.status });
    if (!waits) await this.writeFlag(trx, emit, project, environment, release, { kind: 'percent', percent: plan.steps[0]!.percent }, actor);
    await this.record(trx, actor, project, environment, release, 'release.started', {
      flag: { after: slug },
      variant: { after: release.variant },
      baseline: { after: release.baseline },
      steps: { after: release.steps },
      guardrails: { after: release.guardrails },
      ...note,
    });
    if (waits) await this.record(trx, actor, project, environment, release, 'release.waiting_approval', { step: { after: 0 }, ...note });
    return release;
  }

  async list(projectKey: string, environmentKey: string, slug: string): Promise<Release[]> {
    const { environment } = await this.scope(projectKey, environmentKey, slug);
    return this.deps.store.listForFlag(this.deps.db, environment.id, slug);
  }

  async get(projectKey: string, environmentKey: string, slug: string, releaseId: string): Promise<Release> {
    const { environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    const release = await this.deps.store.find(this.deps.db, environment.id, releaseId);
    if (!release || release.flagSlug !== slug) throw new AppError('not_found', message('releaseNotFound', { releaseId, slug, environment: environment.name }));
    return release;
  }

  /** A release's guardrail readings over time (the chart of the two arms). */
  async readings(projectKey: string, environmentKey: string, slug: string, releaseId: string) {
    const release = await this.get(projectKey, environmentKey, slug, releaseId);
    return this.deps.store.listReadings(this.deps.db, release.id);
  }

  /** A person's move: approve, pause, resume, rollback or cancel (the route names it). */
  async act(
    projectKey: string,
    environmentKey: string,
    slug: string,
    releaseId: string,
    action: 'approve' | 'pause' | 'resume' | 'rollback' | 'cancel',
    actor: Actor,
  ): Promise<Release> {
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    const release = await this.get(projectKey, environmentKey, slug, releaseId);
    const refuse = () => new AppError('conflict', message('releaseState', { releaseId, status: release.status, action: PAST[action] }));
    const now = this.now();
    const stepChange = { step: { after: release.currentStep } };
    let transition: Transition;
    switch (action) {
      case 'approve': {
        if (release.status !== 'waiting_approval') throw refuse();
        if (approvalsNeeded(environment) > 0 && sameActor(release.createdBy, actor)) {
          throw new AppError('forbidden', message('releaseSelfApproval', { environment: environment.name }));
        }
        const progress = release.progress.map((p, i) => (i === release.currentStep ? { ...p, approvedBy: actor.label, startedAt: now } : p));
        transition = {
          next: { ...release, status: 'running', progress },
          flag: { kind: 'percent', percent: release.steps[release.currentStep]!.percent },
          action: 'release.step_started',
          changes: { ...stepChange, approvedBy: { after: actor.label }, percent: { after: release.steps[release.currentStep]!.percent } },
        };
        break;
      }
      case 'pause':
        if (release.status !== 'running' && release.status !== 'waiting_approval') throw refuse();
        transition = {
          // The step's hold stops counting while paused (resumeProgress adds the pause to what it skips).
          next: { ...release, status: 'paused', progress: release.progress.map((p, i) => (i === release.currentStep ? pauseProgress(p, now) : p)) },
          flag: undefined,
          action: 'release.paused',
          changes: { status: { before: release.status, after: 'paused' } },
        };
        break;
      case 'resume': {
        if (release.status !== 'paused') throw refuse();
        const status: ReleaseStatus = release.progress[release.currentStep]?.startedAt ? 'running' : 'waiting_approval';
        const progress = release.progress.map((p, i) => (i === release.currentStep ? resumeProgress(p, now) : p));
        transition = {
          next: { ...release, status, progress },
          flag: undefined,
          action: 'release.resumed',
          changes: { status: { before: 'paused', after: status } },
        };
        break;
      }
      case 'rollback':
      case 'cancel': {
        if (!ACTIVE_STATUSES.includes(release.status)) throw refuse();
        const status: ReleaseStatus = action === 'rollback' ? 'rolled_back' : 'cancelled';
        const reason = action === 'rollback' ? `rolled back by ${actor.label}` : null;
        transition = {
          next: { ...release, status, rolledBackReason: reason },
          flag: { kind: 'end', serve: release.baseline },
          action: action === 'rollback' ? 'release.rolled_back' : 'release.cancelled',
          changes: { status: { before: release.status, after: status }, ...(reason ? { reason: { after: reason } } : {}) },
        };
        break;
      }
    }
    const done = await this.apply(project, environment, release, transition, actor);
    if (!done) throw new AppError('conflict', message('releaseMoved', { releaseId }));
    return done;
  }

  /**
   * Carries out one transition in one transaction: the release row only if it still has the version it
   * was read with, then the flag, the audit entry and the creator's e-mail. Answers the release written,
   * or undefined when another move came first (nothing was changed).
   */
  async apply(
    project: Project,
    environment: Environment,
    release: Release,
    t: Transition,
    actor: Actor,
    readings?: GuardrailView[],
  ): Promise<Release | undefined> {
    const now = this.now();
    const next: Release = { ...t.next, updatedAt: now, ...(readings ? { readings } : {}) };
    const recipient = t.notifyCreator ? await this.creatorAddress(release) : undefined;
    try {
      await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
        if (!(await this.deps.store.update(trx, next, release.version))) throw new LostRace();
        if (next.status !== release.status)
          await emit({ type: 'release.changed', projectId: project.id, environmentId: environment.id, releaseId: release.id, status: next.status });
        if (readings) await this.deps.store.insertReadings(trx, release.id, now, readings);
        if (t.flag) await this.writeFlag(trx, emit, project, environment, release, t.flag, actor);
        if (t.action) await this.record(trx, actor, project, environment, release, t.action, t.changes);
        if (recipient) await this.queueMail(trx, recipient, project, environment, next, now);
      });
    } catch (error) {
      if (error instanceof LostRace) return undefined;
      throw error;
    }
    return { ...next, version: release.version + 1 };
  }

  /** The release's rule at a share, or the flag back to one variant for everyone with the rule removed. */
  private async writeFlag(
    trx: Executor,
    emit: Emit,
    project: Project,
    environment: Environment,
    release: Release,
    effect: NonNullable<FlagEffect>,
    actor: Actor,
  ) {
    const flag = (await this.deps.flags.environmentFlags(trx, environment.id)).find((f) => f.slug === release.flagSlug);
    // A flag deleted under its release: nothing left to serve.
    if (!flag) return;
    const config = flagConfig(flag);
    const others = config.rules.filter((r) => r.id !== releaseRuleId(release.id));
    const next =
      effect.kind === 'percent'
        ? { ...config, rules: [...others, releaseRule(release.id, release.variant, release.baseline, effect.percent)] }
        : { ...config, rules: others, defaultVariant: effect.serve };
    await this.deps.flags.applyConfig(
      trx,
      emit,
      { project, environment },
      flag.slug,
      next,
      flag.version,
      actor,
      { release: { after: release.id } },
      { release: true },
    );
  }

  private async record(
    trx: Executor,
    actor: Actor,
    project: Project,
    environment: Environment,
    release: Release,
    action: string,
    changes: Record<string, FieldChange>,
  ) {
    await this.deps.audit.record(trx, actor, {
      projectId: project.id,
      entity: 'release',
      entityId: release.id,
      environmentKey: environment.key,
      action,
      changes: { flag: { after: release.flagSlug }, ...changes },
    });
  }

  /** Read before the transaction: on SQLite a read outside a running transaction would wait for it. */
  private async creatorAddress(release: Release): Promise<string | undefined> {
    if (!this.deps.mail || release.createdBy.id === null || release.createdBy.type === 'system') return undefined;
    try {
      return (await this.deps.accounts.getUser(release.createdBy.id)).email;
    } catch {
      // The creator was removed: nobody to tell.
      return undefined;
    }
  }

  private async queueMail(trx: Executor, recipient: string, project: Project, environment: Environment, release: Release, now: string) {
    const link = `${this.deps.publicUrl}/projects/${project.key}/flags/${release.flagSlug}`;
    const body = [
      `The release of ${release.variant} of flag ${release.flagSlug} in ${environment.name} of ${project.name} was rolled back: everyone is served ${release.baseline} again.`,
      `Why: ${release.rolledBackReason ?? 'a guardrail was breached'}.`,
      link,
    ].join('\n\n');
    await this.deps.store.queueNotification(
      trx,
      { id: newId(), releaseId: release.id, recipient, subject: `[Flagpost] Rolled back: ${release.flagSlug} in ${environment.name}`, body },
      now,
    );
  }
}
