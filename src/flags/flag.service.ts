import { type Actor, type AuditLog, changesOf } from '../audit/index.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { DomainEvents } from '../events/index.ts';
import type { ProjectService } from '../projects/index.ts';
import { adminFlag, applyFlagValues, type Flag, type FlagValues, RESERVED_SLUGS } from './flag.ts';
import type { FlagStore } from './flag.store.ts';
import { initialTargeting } from './flag-serve.ts';
import { checkPreviewContent } from './preview-content.ts';

export interface FlagServiceDeps {
  db: Db;
  store: FlagStore;
  projects: ProjectService;
  /** Announces flag.changed and flag.deleted; gives new environments their flags (environment.created). */
  events: DomainEvents;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
}

/** The fields of a flag the audit log records (all of them: a flag holds no secret). */
const AUDITED: ReadonlyArray<keyof Flag & string> = ['enabled', 'payload', 'expiredAt', 'description', 'isPreview', 'previewName', 'previewContent'];

export type AdminFlagView = ReturnType<typeof adminFlag>;

/** Admin writes of flags. Reads for clients go through the read path (read/flag.read-model.ts). */
export class FlagService {
  constructor(private readonly deps: FlagServiceDeps) {
    // A new environment gets every flag of its project, disabled, in the transaction that creates it.
    deps.events.onTransaction('environment.created', (event, trx) =>
      deps.store.copyProjectFlagsToEnvironment(trx, event.projectId, event.environmentId, event.createdAt),
    );
  }

  /** Creates the flag in every environment of the project at once, each with the values given. */
  async createFlag(projectKey: string, slug: string, values: FlagValues, actor: Actor): Promise<{ slug: string; environments: AdminFlagView[] }> {
    if (RESERVED_SLUGS.has(slug)) {
      throw AppError.validation([{ field: 'body.slug', reason: `"${slug}" is reserved by the flag interface` }]);
    }
    await checkContent(values);
    const project = await this.deps.projects.getProject(projectKey);
    const now = nowIso(this.deps.clock);
    const blank: Omit<Flag, 'id' | 'environmentId'> = {
      projectId: project.id,
      slug,
      type: 'boolean',
      enabled: false,
      targeting: initialTargeting(false),
      payload: null,
      expiredAt: null,
      description: '',
      isPreview: false,
      previewName: null,
      previewContent: null,
      createdAt: now,
      updatedAt: now,
    };
    const flags = project.environments.map((env) => applyFlagValues({ ...blank, id: newId(), environmentId: env.id }, values, now, newId));
    await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      // The unique index is per environment; a project without environments still has one slug.
      if (await this.deps.store.slugExistsInProject(trx, project.id, slug)) {
        throw new AppError('conflict', message('flagExists', { slug, projectKey }));
      }
      await this.deps.store.insertFlags(trx, flags, projectKey);
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'flag',
        entityId: slug,
        action: 'flag.created',
        changes: flags[0] ? changesOf(null, flags[0], AUDITED) : {},
      });
      await emit({ type: 'flag.changed', projectId: project.id, slug, environmentIds: project.environments.map((e) => e.id) });
    });
    return { slug, environments: flags.map((f, i) => adminFlag(f, project.environments[i]!)) };
  }

  /** Changes one flag in one environment (PATCH: absent keeps, null clears). */
  async updateFlag(projectKey: string, environmentKey: string, slug: string, values: FlagValues, actor: Actor): Promise<AdminFlagView> {
    await checkContent(values);
    const { environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    const updated = await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      const flag = await this.deps.store.findFlag(trx, environment.id, slug);
      if (!flag) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
      const next = applyFlagValues(flag, values, nowIso(this.deps.clock), newId);
      await this.deps.store.updateFlag(trx, next);
      await this.deps.audit.record(trx, actor, {
        projectId: flag.projectId,
        entity: 'flag',
        entityId: slug,
        environmentKey,
        action: 'flag.updated',
        changes: changesOf(flag, next, AUDITED),
      });
      await emit({ type: 'flag.changed', projectId: flag.projectId, slug, environmentIds: [environment.id] });
      return next;
    });
    return adminFlag(updated, environment);
  }

  /** Deletes the flag from every environment of the project. */
  async deleteFlag(projectKey: string, slug: string, actor: Actor): Promise<void> {
    const project = await this.deps.projects.getProject(projectKey);
    await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      const before = (await this.deps.store.listProjectFlags(trx, project.id)).filter((f) => f.slug === slug);
      const environmentIds = await this.deps.store.deleteSlug(trx, project.id, slug);
      if (environmentIds.length === 0) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
      const envKey = (id: string) => project.environments.find((e) => e.id === id)?.key ?? id;
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'flag',
        entityId: slug,
        action: 'flag.deleted',
        changes: {
          enabledIn: { before: before.filter((f) => f.enabled).map((f) => envKey(f.environmentId)) },
          environments: { before: environmentIds.map(envKey) },
        },
      });
      await emit({ type: 'flag.deleted', projectId: project.id, slug, environmentIds });
    });
  }

  /** Every flag of the project, grouped by slug, newest first. */
  async listFlags(projectKey: string): Promise<Array<{ slug: string; environments: AdminFlagView[] }>> {
    const project = await this.deps.projects.getProject(projectKey);
    const flags = await this.deps.store.listProjectFlags(this.deps.db, project.id);
    // Slugs newest first; within a slug, environments in the project's order, as createFlag answers.
    const bySlug = new Map<string, Map<string, (typeof flags)[number]>>();
    for (const flag of flags) {
      const envs = bySlug.get(flag.slug) ?? new Map();
      envs.set(flag.environmentId, flag);
      bySlug.set(flag.slug, envs);
    }
    return [...bySlug].map(([slug, envs]) => ({
      slug,
      environments: project.environments.flatMap((env) => {
        const flag = envs.get(env.id);
        return flag ? [adminFlag(flag, env)] : [];
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

async function checkContent(values: FlagValues): Promise<void> {
  if (values.previewContent === undefined || values.previewContent === null) return;
  const problems = await checkPreviewContent(values.previewContent, 'body.previewContent');
  if (problems.length > 0) throw AppError.validation(problems);
}
