import type { Actor, AuditLog, FieldChange } from '../audit/index.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { DomainEvents, Emit } from '../events/index.ts';
import { bypassNote, checkWritable, type Environment, type Project, type ProjectService, type WriteOptions } from '../projects/index.ts';
import { engineSegment, type SegmentService } from '../segments/index.ts';
import type { FlagTargeting, FlagType, Variants } from '../targeting/index.ts';
import { collectRefs } from '../targeting/compile.ts';
import {
  adminFlag,
  applyFlagValues,
  type Flag,
  type FlagConfig,
  flagConfig,
  type FlagValues,
  RESERVED_SLUGS,
  ruleInputProblems,
  touchesTargeting,
} from './flag.ts';
import type { FlagStore } from './flag.store.ts';
import type { FlagWrites } from './flag-writes.ts';
import { booleanVariantFor, enabledOf, initialTargeting, switchTargeting } from './flag-serve.ts';
import { checkPreviewContent } from './preview-content.ts';
import { checkEnvironment, flagdPortability, portabilityOf } from './targeting-check.ts';

export interface FlagServiceDeps {
  db: Db;
  store: FlagStore;
  projects: ProjectService;
  /** The segments rules reference (validation, portability). */
  segments: SegmentService;
  /**
   * Announces flag.changed and flag.deleted; gives new environments their flags (environment.created);
   * refuses to delete a segment that rules use (segment.deleting).
   */
  events: DomainEvents;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
  /** The one write door of a flag: protection, validation, guards, store, audit, announcement. */
  writes: FlagWrites;
  /** The last evaluation of each flag and environment, for the admin answers (usage/flag-usage.service.ts counts them). */
  usage: LastEvaluated;
}

/** The port through which the write model learns when each flag was last evaluated, without importing the read side. */
export interface LastEvaluated {
  /** The latest evaluation of each flag in each environment of the project, as `environmentId\nslug` -> ISO time. */
  lastEvaluated(project: Project): Promise<Map<string, string>>;
}

/** A new flag: its type and starting variants besides the values of every flag. */
export interface NewFlagValues extends Omit<FlagValues, 'state' | 'rules' | 'prerequisites' | 'jsonLogic' | 'metadata' | 'defaultVariant'> {
  type?: FlagType;
  defaultVariant?: string;
}

export type AdminFlagView = ReturnType<typeof adminFlag>;

/**
 * Change requests for the values a new flag asks for in protected environments, where it starts
 * switched off (issue 29 item 2): a port owned by flags/ and answered by changes/ (PromotionService),
 * which the admin route passes in, so that flags/ does not import changes/.
 */
export interface NewFlagChangeRequests {
  /** Who reviews a request by `actor` in `project`; read before the transaction (on SQLite a read outside it would wait for it). */
  reviewersOf(project: Project, actor: Actor): Promise<string[]>;
  /** Opens and submits a request of these whole configurations within the caller's transaction. */
  openIn(
    trx: Executor,
    emit: Emit,
    target: { project: Project; environment: Environment },
    change: { title: string; flags: Array<{ slug: string; config: FlagConfig }> },
    actor: Actor,
    reviewers: string[],
  ): Promise<{ id: string }>;
}

/** How a flag is created: an owner's bypass of protection, and where the values held back in protected environments go. */
export interface CreateFlagOptions extends WriteOptions {
  changeRequests?: NewFlagChangeRequests;
}

/** A new flag, and the change request opened in each protected environment for what it asked for there. */
export interface CreatedFlag {
  slug: string;
  environments: AdminFlagView[];
  changeRequests: Array<{ id: string; environment: { key: string; name: string } }>;
}

/** Admin writes of flags. Reads for clients go through the read path (evaluation/flag.read-model.ts). */
/** A flag with what it shares across environments and its value in each. */
export interface FlagAcrossEnvironments {
  slug: string;
  tags: string[];
  archivedAt: string | null;
  environments: AdminFlagView[];
}

export class FlagService {
  constructor(private readonly deps: FlagServiceDeps) {
    // A new environment gets every flag of its project, switched off, in the transaction that creates it.
    deps.events.onTransaction('environment.created', (event, trx) =>
      deps.store.copyProjectFlagsToEnvironment(trx, event.projectId, event.environmentId, event.createdAt),
    );
    deps.events.onTransaction('segment.deleting', async (event, trx) => {
      const users = (await deps.store.listProjectFlags(trx, event.projectId)).filter((f) => usesSegment(f.targeting, event.segmentKey));
      if (users.length > 0) {
        const envName = (id: string) => event.environments.find((e) => e.id === id)?.name ?? id;
        const flags = users.map((f) => `${f.slug} (${envName(f.environmentId)})`).join(', ');
        throw new AppError('conflict', message('segmentInUse', { segmentKey: event.segmentKey, flags }));
      }
    });
  }

  /**
   * Creates the flag in every environment of the project at once. A flag without `type` is a boolean
   * flag over on/off whose switch is `enabled`; other types need `variants`. Every new flag starts
   * switched off unless `enabled` is true: a boolean flag serves its false variant, another type is
   * DISABLED (OpenFeature callers get their default) until switched on. In a protected environment the
   * flag starts switched off whatever was asked, and what was asked waits in a change request there
   * (issue 29 item 2), unless `bypassProtection` (an owner's emergency, recorded in the audit).
   */
  async createFlag(projectKey: string, slug: string, values: NewFlagValues, actor: Actor, options: CreateFlagOptions = {}): Promise<CreatedFlag> {
    if (RESERVED_SLUGS.has(slug)) {
      throw AppError.validation([{ field: 'body.slug', reason: `"${slug}" is reserved by the flag interface` }]);
    }
    await checkContent(values);
    const { type: requestedType, variants, defaultVariant, enabled, ...rest } = values;
    const type = requestedType ?? 'boolean';
    const targeting = startingTargeting(type, variants, defaultVariant, enabled ?? false);
    const project = await this.deps.projects.getProject(projectKey);
    const now = nowIso(this.deps.clock);
    const blank: Omit<Flag, 'id' | 'environmentId'> = {
      projectId: project.id,
      version: 1,
      slug,
      type,
      enabled: enabledOf(type, targeting),
      targeting,
      payload: null,
      expiredAt: null,
      description: '',
      isPreview: false,
      previewName: null,
      previewContent: null,
      createdAt: now,
      updatedAt: now,
    };
    checkEnvironment([{ ...blank, id: '', environmentId: '' }], [], slug, 'body');
    const wanted = project.environments.map((env) => applyFlagValues({ ...blank, id: newId(), environmentId: env.id }, rest, now, newId));
    const protectedEnvironments = project.environments.filter((e) => e.protected);
    const guarded = options.bypassProtection ? [] : protectedEnvironments;
    // Switched off (the requested default serve aside), without payload, description or expiry.
    const offTargeting = startingTargeting(type, variants, undefined, false);
    const off = (flag: Flag): Flag => ({
      ...blank,
      id: flag.id,
      environmentId: flag.environmentId,
      targeting: offTargeting,
      enabled: enabledOf(type, offTargeting),
    });
    const held = wanted.flatMap((flag, i) => {
      const environment = project.environments[i]!;
      if (!guarded.includes(environment)) return [];
      return JSON.stringify(flagConfig(off(flag))) === JSON.stringify(flagConfig(flag)) ? [] : [{ environment, config: flagConfig(flag) }];
    });
    if (guarded.length > 0 && (values.isPreview === true || values.previewName != null || values.previewContent != null)) {
      // Preview settings are served, and a change request does not carry them.
      throw new AppError('conflict', message('flagPreviewProtected', { slug, environment: guarded[0]!.name }));
    }
    const port = options.changeRequests;
    if (held.length > 0 && !port) throw new AppError('conflict', message('environmentProtected', { environment: held[0]!.environment.name, projectKey }));
    const flags = wanted.map((flag, i) => (guarded.includes(project.environments[i]!) ? off(flag) : flag));
    const reviewers = held.length > 0 ? await port!.reviewersOf(project, actor) : [];
    const changeRequests: CreatedFlag['changeRequests'] = [];
    await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      // The unique index is per environment; a project without environments still has one slug.
      if (await this.deps.store.slugExistsInProject(trx, project.id, slug)) {
        throw new AppError('conflict', message('flagExists', { slug, projectKey }));
      }
      await this.deps.writes.create(trx, emit, {
        project,
        slug,
        rows: flags,
        actor,
        note: bypassNote(options.bypassProtection && protectedEnvironments.length > 0),
      });
      for (const { environment, config } of held) {
        const title = `Create flag ${slug} in ${environment.name}`;
        const { id } = await port!.openIn(trx, emit, { project, environment }, { title, flags: [{ slug, config }] }, actor, reviewers);
        changeRequests.push({ id, environment: { key: environment.key, name: environment.name } });
      }
    });
    return { slug, environments: flags.map((f, i) => adminFlag(f, project.environments[i]!, portabilityOf(new Map(), f.slug))), changeRequests };
  }

  /**
   * Changes one flag in one environment (PATCH: absent keeps, null clears). Targeting is validated with
   * the environment it lives in; `enabled` is always derived from the result (flag-serve.ts). A protected
   * environment refuses it (409) unless `bypassProtection` (an owner's emergency, recorded in the audit).
   */
  async updateFlag(
    projectKey: string,
    environmentKey: string,
    slug: string,
    values: FlagValues,
    actor: Actor,
    options: WriteOptions = {},
  ): Promise<AdminFlagView> {
    await checkContent(values);
    const shapeProblems = ruleInputProblems(values.rules, 'body.rules');
    if (shapeProblems.length > 0) throw AppError.validation(shapeProblems);
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    checkWritable(environment, projectKey, options);
    const { next, envFlags, segments } = await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      const flag = await this.deps.store.findFlag(trx, environment.id, slug);
      if (!flag) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
      if (
        values.enabled !== undefined &&
        flag.type === 'boolean' &&
        booleanVariantFor(values.variants ?? flag.targeting.variants, values.enabled) === undefined
      ) {
        throw AppError.validation([{ field: 'body.enabled', reason: `the flag has no variant with the value ${values.enabled}` }]);
      }
      const next = applyFlagValues(flag, values, nowIso(this.deps.clock), newId);
      const written = await this.deps.writes.update(trx, emit, {
        project,
        environment,
        before: flag,
        after: next,
        actor,
        authority: { direct: options },
        check: { at: 'body', validate: touchesTargeting(values) },
      });
      return { next, ...written };
    });
    const last = await this.deps.usage.lastEvaluated(project);
    return adminFlag(
      { ...next, version: next.version + 1 },
      environment,
      portabilityOf(flagdPortability(envFlags, segments), slug),
      last.get(`${environment.id}\n${slug}`) ?? null,
    );
  }

  /**
   * Sets the whole configuration of a flag in one environment within the caller's transaction: the path
   * change requests, promotion and revert take (issue 24), the same checks, audit entry and announcement
   * as a direct write. With `baseVersion`, a flag written since is a conflict naming it. `note` adds
   * fields to the audit entry (the change request it came from). Answers the configuration it replaced.
   */
  async applyConfig(
    trx: Executor,
    emit: Emit,
    target: { project: Project; environment: Environment },
    slug: string,
    config: FlagConfig,
    baseVersion: number | undefined,
    actor: Actor,
    note: Record<string, FieldChange> = {},
    by: { release?: boolean } = {},
  ): Promise<FlagConfig> {
    const { project, environment } = target;
    const flag = await this.deps.store.findFlag(trx, environment.id, slug);
    if (!flag) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey: project.key }));
    if (baseVersion !== undefined && flag.version !== baseVersion) throw conflictOf(slug, environment.name);
    const next = applyFlagValues(flag, config, nowIso(this.deps.clock), newId);
    await this.deps.writes.update(trx, emit, {
      project,
      environment,
      before: flag,
      after: next,
      actor,
      authority: { reviewed: true },
      check: { at: `flags.${slug}`, validate: true },
      expectedVersion: flag.version,
      note,
      owner: by.release ? 'release' : undefined,
    });
    return flagConfig(flag);
  }

  /**
   * The whole configuration a flag would have in an environment after `values` (PATCH semantics over
   * its current one), with the version it is based on: what a change request keeps (issue 24). Read
   * within the caller's transaction when given (flags as code proposes flags it creates in it).
   */
  async proposeConfig(
    environment: Environment,
    projectKey: string,
    slug: string,
    values: FlagValues,
    at: string,
    trx?: Executor,
  ): Promise<{ baseVersion: number; config: FlagConfig }> {
    const shapeProblems = ruleInputProblems(values.rules, `${at}.rules`);
    if (shapeProblems.length > 0) throw AppError.validation(shapeProblems);
    const flag = await this.deps.store.findFlag(trx ?? this.deps.db, environment.id, slug);
    if (!flag) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
    if (
      values.enabled !== undefined &&
      flag.type === 'boolean' &&
      booleanVariantFor(values.variants ?? flag.targeting.variants, values.enabled) === undefined
    ) {
      throw AppError.validation([{ field: `${at}.enabled`, reason: `the flag has no variant with the value ${values.enabled}` }]);
    }
    return { baseVersion: flag.version, config: flagConfig(applyFlagValues(flag, values, flag.updatedAt, newId)) };
  }

  /** One flag of an environment as stored, or undefined. */
  async findFlag(environmentId: string, slug: string): Promise<Flag | undefined> {
    return this.deps.store.findFlag(this.deps.db, environmentId, slug);
  }

  /** Every flag of an environment as stored (read within a caller's transaction, or the database). */
  async environmentFlags(db: Executor | undefined, environmentId: string): Promise<Flag[]> {
    return this.deps.store.listEnvironmentFlags(db ?? this.deps.db, environmentId);
  }

  /** Deletes the flag from every environment of the project; refused while another flag has it as a prerequisite. */
  async deleteFlag(projectKey: string, slug: string, actor: Actor, options: WriteOptions = {}): Promise<void> {
    const project = await this.deps.projects.getProject(projectKey);
    for (const environment of project.environments) checkWritable(environment, projectKey, options);
    await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      const all = await this.deps.store.listProjectFlags(trx, project.id);
      const dependents = all.filter((f) => f.slug !== slug && f.targeting.prerequisites.some((p) => p.flag === slug));
      if (dependents.length > 0) {
        const envName = (id: string) => project.environments.find((e) => e.id === id)?.name ?? id;
        const flags = dependents.map((f) => `${f.slug} (${envName(f.environmentId)})`).join(', ');
        throw new AppError('conflict', message('flagIsPrerequisite', { slug, flags }));
      }
      const before = all.filter((f) => f.slug === slug);
      const envKey = (id: string) => project.environments.find((e) => e.id === id)?.key ?? id;
      const environmentIds = await this.deps.writes.delete(trx, emit, {
        project,
        slug,
        actor,
        authority: { direct: options },
        changes: (environmentIds) => ({
          type: { before: before[0]?.type ?? 'boolean' },
          enabledIn: { before: before.filter((f) => f.enabled).map((f) => envKey(f.environmentId)) },
          environments: { before: environmentIds.map(envKey) },
        }),
      });
      if (environmentIds.length === 0) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
    });
  }

  /**
   * What a flag shares across environments (issue 22, docs/adr/0037-rename-archive.md): its slug (a
   * rename, refused while other flags name it as a prerequisite), its tags and whether it is archived.
   * An archived flag is served as before; it leaves the dashboard's list of active flags. A rename
   * changes what every environment serves under both slugs, so it is refused while one is protected
   * (issue 29 item 2) unless `bypassProtection` (an owner's emergency, recorded in the audit).
   */
  async updateFlagAcrossEnvironments(
    projectKey: string,
    slug: string,
    values: { slug?: string; tags?: string[]; archived?: boolean },
    actor: Actor,
    options: WriteOptions = {},
  ): Promise<FlagAcrossEnvironments> {
    const project = await this.deps.projects.getProject(projectKey);
    const to = values.slug !== undefined && values.slug !== slug ? values.slug : undefined;
    if (to !== undefined && RESERVED_SLUGS.has(to)) {
      throw AppError.validation([{ field: 'body.slug', reason: `"${to}" is reserved by the flag interface` }]);
    }
    const guarded = to !== undefined && project.environments.some((e) => e.protected);
    if (guarded && !options.bypassProtection) throw new AppError('conflict', message('flagRenameProtected', { projectKey }));
    const tags = values.tags === undefined ? undefined : [...new Set(values.tags.map((t) => t.trim().toLowerCase()))].sort();
    await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      const all = await this.deps.store.listProjectFlags(trx, project.id);
      const rows = all.filter((f) => f.slug === slug);
      const first = rows[0];
      if (!first) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
      if (to !== undefined) {
        const dependents = all.filter((f) => f.slug !== slug && f.targeting.prerequisites.some((p) => p.flag === slug));
        if (dependents.length > 0) {
          const envName = (id: string) => project.environments.find((e) => e.id === id)?.name ?? id;
          throw new AppError(
            'conflict',
            message('flagRenamePrerequisite', { slug, flags: dependents.map((f) => `${f.slug} (${envName(f.environmentId)})`).join(', ') }),
          );
        }
        if (all.some((f) => f.slug === to)) throw new AppError('conflict', message('flagExists', { slug: to, projectKey }));
      }
      const wasArchived = first.archivedAt ?? null;
      const archivedAt = values.archived === undefined ? undefined : values.archived ? (wasArchived ?? nowIso(this.deps.clock)) : null;
      const changes: Record<string, { before?: unknown; after?: unknown }> = {};
      if (to !== undefined) changes.slug = { before: slug, after: to };
      if (guarded) Object.assign(changes, bypassNote(true));
      if (tags !== undefined && JSON.stringify(tags) !== JSON.stringify(first.tags ?? [])) changes.tags = { before: first.tags ?? [], after: tags };
      if (archivedAt !== undefined && (archivedAt === null) !== (wasArchived === null))
        changes.archived = { before: wasArchived !== null, after: archivedAt !== null };
      if (Object.keys(changes).length === 0) return;
      const environmentIds = await this.deps.store.updateSlug(
        trx,
        project.id,
        slug,
        { slug: to, tags, archivedAt, updatedAt: nowIso(this.deps.clock) },
        projectKey,
      );
      const action = to !== undefined ? 'flag.renamed' : changes.archived ? (archivedAt ? 'flag.archived' : 'flag.unarchived') : 'flag.updated';
      await this.deps.audit.record(trx, actor, { projectId: project.id, entity: 'flag', entityId: to ?? slug, action, changes });
      if (to !== undefined) await emit({ type: 'flag.renamed', projectId: project.id, from: slug, to, environmentIds });
    });
    const entry = (await this.listFlags(projectKey)).find((f) => f.slug === (to ?? slug));
    if (!entry) throw new AppError('not_found', message('adminFlagNotFound', { slug: to ?? slug, projectKey }));
    return entry;
  }

  /** Every flag of the project, grouped by slug, newest first. */
  async listFlags(projectKey: string): Promise<FlagAcrossEnvironments[]> {
    const project = await this.deps.projects.getProject(projectKey);
    const [flags, segmentRows, last] = await Promise.all([
      this.deps.store.listProjectFlags(this.deps.db, project.id),
      this.deps.segments.projectSegments(this.deps.db, project.id),
      this.deps.usage.lastEvaluated(project),
    ]);
    const segments = segmentRows.map(engineSegment);
    const portability = new Map(
      project.environments.map(
        (env) =>
          [
            env.id,
            flagdPortability(
              flags.filter((f) => f.environmentId === env.id),
              segments,
            ),
          ] as const,
      ),
    );
    // Slugs newest first; within a slug, environments in the project's order, as createFlag answers.
    const bySlug = new Map<string, Map<string, (typeof flags)[number]>>();
    for (const flag of flags) {
      const envs = bySlug.get(flag.slug) ?? new Map();
      envs.set(flag.environmentId, flag);
      bySlug.set(flag.slug, envs);
    }
    return [...bySlug].map(([slug, envs]) => ({
      slug,
      tags: [...envs.values()][0]?.tags ?? [],
      archivedAt: [...envs.values()][0]?.archivedAt ?? null,
      environments: project.environments.flatMap((env) => {
        const flag = envs.get(env.id);
        return flag ? [adminFlag(flag, env, portabilityOf(portability.get(env.id)!, slug), last.get(`${env.id}\n${slug}`) ?? null)] : [];
      }),
    }));
  }

  /** True when the environment has a flag with this slug. */
  async hasFlag(environmentId: string, slug: string): Promise<boolean> {
    return (await this.deps.store.findFlag(this.deps.db, environmentId, slug)) !== undefined;
  }

  /** True when the environment has a flag with this slug marked as preview. */
  async isPreviewFlag(environmentId: string, slug: string): Promise<boolean> {
    const flag = await this.deps.store.findFlag(this.deps.db, environmentId, slug);
    return flag?.isPreview === true;
  }
}

function conflictOf(slug: string, environment: string): AppError {
  return new AppError('conflict', message('changeConflict', { slug, environment }));
}

/**
 * The targeting a new flag starts with in every environment. Boolean without variants: on/off, the
 * switch decides. Otherwise the variants given; the default variant given, or the one the switch picks
 * (boolean), or the first; a non-boolean flag is DISABLED until switched on.
 */
function startingTargeting(type: FlagType, variants: Variants | undefined, defaultVariant: string | undefined, enabled: boolean): FlagTargeting {
  if (variants === undefined) {
    if (type !== 'boolean') throw AppError.validation([{ field: 'body.variants', reason: `a ${type} flag needs variants` }]);
    const targeting = initialTargeting(enabled);
    return defaultVariant === undefined ? targeting : { ...targeting, defaultVariant };
  }
  const first = Object.keys(variants)[0] ?? null;
  const base: FlagTargeting = { state: 'ENABLED', variants, defaultVariant: first, prerequisites: [], rules: [] };
  const switched = switchTargeting(type, base, enabled);
  if (switched === undefined) {
    // A boolean flag without a variant of the value asked for: refused when asked to be on, and
    // DISABLED (serving nothing) rather than on when it has no false variant to start with.
    if (enabled) throw AppError.validation([{ field: 'body.enabled', reason: 'the flag has no variant with the value true' }]);
    return { ...base, state: 'DISABLED', defaultVariant: defaultVariant ?? first };
  }
  return defaultVariant === undefined ? switched : { ...switched, defaultVariant };
}

/** True when rules (in any state) or imported JSON Logic reference the segment. */
function usesSegment(targeting: FlagTargeting, segmentKey: string): boolean {
  if (targeting.rules.some((r) => r.segments.includes(segmentKey))) return true;
  return targeting.jsonLogic !== undefined && collectRefs(targeting.jsonLogic, new Set()).has(segmentKey);
}

async function checkContent(values: FlagValues): Promise<void> {
  if (values.previewContent === undefined || values.previewContent === null) return;
  const problems = await checkPreviewContent(values.previewContent, 'body.previewContent');
  if (problems.length > 0) throw AppError.validation(problems);
}
