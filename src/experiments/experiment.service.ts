import { type Actor, type AuditLog, changesOf, type FieldChange, unchanged } from '../audit/index.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { Flag, FlagService } from '../flags/index.ts';
import { bypassNote, type Environment, type Project, type ProjectService, type WriteOptions } from '../projects/index.ts';
import type { EventStore } from './event.store.ts';
import { experimentUsersOf } from './event-writer.ts';
import type { ExperimentStore } from './experiment.store.ts';
import { DRAFT_ONLY_FIELDS, type Experiment, type ExperimentValues, splitOf } from './experiment.ts';
import type { MetricStore } from './metric.store.ts';

export interface ExperimentServiceDeps {
  db: Db;
  store: ExperimentStore;
  metrics: MetricStore;
  events: EventStore;
  projects: Pick<ProjectService, 'getEnvironment'>;
  flags: Pick<FlagService, 'findFlag'>;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
}

/** Told after a commit that started or stopped an experiment (the read path's exposure recording listens). */
export interface RunningListener {
  /** Resolves once the listener knows (a start answers once this process records its exposures). */
  runningChanged(): Promise<void>;
}

const AUDITED = ['key', 'name', 'flagKey', 'ruleId', 'controlVariant', 'metrics', 'guardrails', 'hypothesis', 'status'] as const;

type Scope = { project: Project; environment: Environment; projectKey: string; environmentKey: string };

/**
 * Experiments of an environment (issue 32): drafts, start and stop, audited. Every write is a change of
 * the environment: a protected one refuses it (409) unless an owner bypasses, as for flags; change
 * requests carry flags and segments only, so an experiment is started there by an owner's bypass.
 */
export class ExperimentService {
  private readonly listeners: RunningListener[] = [];

  constructor(private readonly deps: ExperimentServiceDeps) {}

  /** Adds a listener told after every start and stop. */
  listen(listener: RunningListener): void {
    this.listeners.push(listener);
  }

  private async scope(projectKey: string, environmentKey: string): Promise<Scope> {
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    return { project, environment, projectKey, environmentKey };
  }

  private checkWritable(scope: Scope, options: WriteOptions): void {
    if (scope.environment.protected && !options.bypassProtection) {
      throw new AppError('conflict', message('experimentProtected', { environment: scope.environment.name, projectKey: scope.projectKey }));
    }
  }

  private async flagOf(scope: Scope, flagKey: string): Promise<Flag> {
    const flag = await this.deps.flags.findFlag(scope.environment.id, flagKey);
    if (!flag) throw new AppError('not_found', message('adminFlagNotFound', { slug: flagKey, projectKey: scope.projectKey }));
    return flag;
  }

  /** Metric keys must name metrics of the project; the first unknown is a 400 naming its field. */
  private async checkMetrics(trx: Executor, scope: Scope, x: Pick<Experiment, 'metrics' | 'guardrails'>): Promise<void> {
    const known = new Set((await this.deps.metrics.list(trx, scope.project.id)).map((m) => m.key));
    for (const [field, keys] of [
      ['metrics', x.metrics],
      ['guardrails', x.guardrails],
    ] as const) {
      const index = keys.findIndex((k) => !known.has(k));
      if (index >= 0) throw AppError.validation([{ field: `body.${field}[${index}]`, reason: `no metric ${keys[index]} in project ${scope.projectKey}` }]);
    }
  }

  private checkControl(flag: Flag, controlVariant: string): void {
    if (!(controlVariant in flag.targeting.variants)) {
      throw AppError.validation([{ field: 'body.controlVariant', reason: `flag ${flag.slug} has no variant ${controlVariant}` }]);
    }
  }

  private async get(trx: Executor, scope: Scope, experimentKey: string): Promise<Experiment> {
    const experiment = await this.deps.store.find(trx, scope.environment.id, experimentKey);
    if (!experiment) throw new AppError('not_found', message('experimentNotFound', { experimentKey, environmentKey: scope.environmentKey }));
    return experiment;
  }

  private async audit(trx: Executor, actor: Actor, scope: Scope, x: Experiment, action: string, changes: Record<string, FieldChange>, options: WriteOptions) {
    await this.deps.audit.record(trx, actor, {
      projectId: scope.project.id,
      entity: 'experiment',
      entityId: x.id,
      environmentKey: scope.environmentKey,
      action,
      changes: { name: unchanged(x.name), ...changes, ...bypassNote(options.bypassProtection && scope.environment.protected) },
    });
  }

  /** Creates a draft experiment on a flag of the environment. */
  async create(
    projectKey: string,
    environmentKey: string,
    input: ExperimentValues & { key: string; name: string; flagKey: string; controlVariant: string; metrics: string[] },
    actor: Actor,
    options: WriteOptions = {},
  ): Promise<Experiment> {
    const scope = await this.scope(projectKey, environmentKey);
    this.checkWritable(scope, options);
    const flag = await this.flagOf(scope, input.flagKey);
    this.checkControl(flag, input.controlVariant);
    const now = nowIso(this.deps.clock);
    const experiment: Experiment = {
      id: newId(),
      projectId: scope.project.id,
      environmentId: scope.environment.id,
      key: input.key,
      name: input.name,
      flagKey: input.flagKey,
      ruleId: input.ruleId ?? null,
      controlVariant: input.controlVariant,
      metrics: input.metrics,
      guardrails: input.guardrails ?? [],
      hypothesis: input.hypothesis ?? null,
      status: 'draft',
      split: null,
      startedAt: null,
      stoppedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.checkMetrics(trx, scope, experiment);
      await this.deps.store.insert(trx, experiment, environmentKey);
      await this.audit(trx, actor, scope, experiment, 'experiment.created', changesOf(null, experiment, AUDITED), options);
    });
    return experiment;
  }

  async list(projectKey: string, environmentKey: string): Promise<Experiment[]> {
    const scope = await this.scope(projectKey, environmentKey);
    return this.deps.store.list(this.deps.db, scope.environment.id);
  }

  /** An experiment, or 404. */
  async find(projectKey: string, environmentKey: string, experimentKey: string): Promise<Experiment> {
    return this.get(this.deps.db, await this.scope(projectKey, environmentKey), experimentKey);
  }

  /** Changes an experiment (absent keeps); who is measured (flag, rule, control) changes only in a draft. */
  async update(projectKey: string, environmentKey: string, experimentKey: string, values: ExperimentValues, actor: Actor, options: WriteOptions = {}) {
    const scope = await this.scope(projectKey, environmentKey);
    this.checkWritable(scope, options);
    // The flag is read before the transaction: on SQLite's one connection a read outside it would wait for it.
    const current = await this.get(this.deps.db, scope, experimentKey);
    const flag = values.flagKey !== undefined || values.controlVariant !== undefined ? await this.flagOf(scope, values.flagKey ?? current.flagKey) : undefined;
    return this.deps.db.transaction().execute(async (trx) => {
      const experiment = await this.get(trx, scope, experimentKey);
      const changed = DRAFT_ONLY_FIELDS.find((f) => values[f] !== undefined && values[f] !== experiment[f]);
      if (changed && experiment.status !== 'draft') {
        throw new AppError('conflict', message('experimentNotDraft', { experimentKey, status: experiment.status, field: changed }));
      }
      const next: Experiment = {
        ...experiment,
        name: values.name ?? experiment.name,
        flagKey: values.flagKey ?? experiment.flagKey,
        ruleId: values.ruleId === undefined ? experiment.ruleId : values.ruleId,
        controlVariant: values.controlVariant ?? experiment.controlVariant,
        metrics: values.metrics ?? experiment.metrics,
        guardrails: values.guardrails ?? experiment.guardrails,
        hypothesis: values.hypothesis === undefined ? experiment.hypothesis : values.hypothesis,
        updatedAt: nowIso(this.deps.clock),
      };
      if (flag) this.checkControl(flag, next.controlVariant);
      await this.checkMetrics(trx, scope, next);
      await this.deps.store.update(trx, next);
      await this.audit(trx, actor, scope, next, 'experiment.updated', changesOf(experiment, next, AUDITED), options);
      return next;
    });
  }

  /** Deletes a draft or stopped experiment with its users; a running one is stopped first (409). */
  async delete(projectKey: string, environmentKey: string, experimentKey: string, actor: Actor, options: WriteOptions = {}): Promise<void> {
    const scope = await this.scope(projectKey, environmentKey);
    this.checkWritable(scope, options);
    await this.deps.db.transaction().execute(async (trx) => {
      const experiment = await this.get(trx, scope, experimentKey);
      if (experiment.status === 'running') throw new AppError('conflict', message('experimentState', { experimentKey, status: 'running', action: 'deleted' }));
      await this.deps.store.delete(trx, experiment.id);
      await this.audit(trx, actor, scope, experiment, 'experiment.deleted', changesOf(experiment, null, AUDITED), options);
    });
  }

  /**
   * Starts a draft: the split of its rule is recorded (results check the sample ratio against it), and
   * exposures from now on make its users. 409 when the flag has no split to measure.
   */
  async start(projectKey: string, environmentKey: string, experimentKey: string, actor: Actor, options: WriteOptions = {}): Promise<Experiment> {
    const scope = await this.scope(projectKey, environmentKey);
    this.checkWritable(scope, options);
    // The flag is read before the transaction: on SQLite's one connection a read outside it would wait for it.
    const flag = await this.flagOf(scope, (await this.get(this.deps.db, scope, experimentKey)).flagKey);
    const started = await this.deps.db.transaction().execute(async (trx) => {
      const experiment = await this.get(trx, scope, experimentKey);
      if (experiment.status !== 'draft')
        throw new AppError('conflict', message('experimentState', { experimentKey, status: experiment.status, action: 'started' }));
      if (experiment.flagKey !== flag.slug)
        throw new AppError('conflict', message('experimentState', { experimentKey, status: 'changed', action: 'started now' }));
      const lookup = splitOf(flag.targeting, experiment.ruleId, experiment.controlVariant);
      if ('problem' in lookup) {
        const flagKey = flag.slug;
        if (lookup.problem === 'none') throw new AppError('conflict', message('experimentNoSplit', { flagKey, environment: scope.environment.name }));
        if (lookup.problem === 'ambiguous') throw new AppError('conflict', message('experimentSplitAmbiguous', { flagKey, count: lookup.count }));
        if (lookup.problem === 'notSplit') throw new AppError('conflict', message('experimentRuleNotSplit', { flagKey, ruleId: lookup.ruleId }));
        throw new AppError('conflict', message('experimentControlNotInSplit', { ruleId: lookup.ruleId, variant: experiment.controlVariant }));
      }
      const other = await this.deps.store.findRunningOnFlag(trx, scope.environment.id, experiment.flagKey);
      if (other) throw new AppError('conflict', message('experimentFlagBusy', { other: other.key, flagKey: experiment.flagKey }));
      const known = new Set((await this.deps.metrics.list(trx, scope.project.id)).map((m) => m.key));
      const missing = [...experiment.metrics, ...experiment.guardrails].filter((k) => !known.has(k));
      if (missing.length > 0) throw new AppError('conflict', message('experimentMetricMissing', { experimentKey, metrics: missing.join(', ') }));
      const now = this.deps.clock();
      const next: Experiment = { ...experiment, status: 'running', split: lookup.split, startedAt: now.toISOString(), updatedAt: now.toISOString() };
      await this.deps.store.update(trx, next);
      // Exposures stored with a time from now on (a client's clock may run ahead) are its first users.
      const early = await this.deps.events.exposuresSince(trx, scope.environment.id, next.flagKey, now.getTime());
      const users = experimentUsersOf(early, [
        {
          id: next.id,
          environmentId: next.environmentId,
          flagKey: next.flagKey,
          variants: new Set(lookup.split.weights.map((w) => w.variant)),
          startedAt: now.getTime(),
        },
      ]);
      if (users.length > 0) await this.deps.events.upsertExperimentUsers(trx, users);
      await this.audit(trx, actor, scope, next, 'experiment.started', { ...changesOf(experiment, next, ['status']), split: { after: next.split } }, options);
      return next;
    });
    await Promise.all(this.listeners.map((l) => l.runningChanged()));
    return started;
  }

  /** Stops a running experiment: its users stay as they are, and results keep answering. */
  async stop(projectKey: string, environmentKey: string, experimentKey: string, actor: Actor, options: WriteOptions = {}): Promise<Experiment> {
    const scope = await this.scope(projectKey, environmentKey);
    this.checkWritable(scope, options);
    const stopped = await this.deps.db.transaction().execute(async (trx) => {
      const experiment = await this.get(trx, scope, experimentKey);
      if (experiment.status !== 'running')
        throw new AppError('conflict', message('experimentState', { experimentKey, status: experiment.status, action: 'stopped' }));
      const now = nowIso(this.deps.clock);
      const next: Experiment = { ...experiment, status: 'stopped', stoppedAt: now, updatedAt: now };
      await this.deps.store.update(trx, next);
      await this.audit(trx, actor, scope, next, 'experiment.stopped', changesOf(experiment, next, ['status']), options);
      return next;
    });
    await Promise.all(this.listeners.map((l) => l.runningChanged()));
    return stopped;
  }
}
