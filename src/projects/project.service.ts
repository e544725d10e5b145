import { newId, newKey, nowIso } from '../db/codec.ts';
import { type Actor, type AuditLog, changesOf } from '../audit/index.ts';
import type { Db, Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { DomainEvents, Emit } from '../events/index.ts';
import { DEFAULT_ENVIRONMENTS, type Environment, type EnvironmentValues, type Project } from './project.ts';
import type { ProjectStore } from './project.store.ts';

export interface ProjectServiceDeps {
  db: Db;
  store: ProjectStore;
  /** Announces project.created and environment.created (a new environment receives its flags from their subscribers). */
  events: DomainEvents;
  /** Appends the audit entry of each write, in the write's transaction. */
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
}

export class ProjectService {
  constructor(private readonly deps: ProjectServiceDeps) {}

  /** Creates a project with the development, staging and production environments. */
  async createProject(name: string, actor: Actor): Promise<Project> {
    return this.deps.events.transaction(this.deps.db, (trx, emit) => this.createProjectIn(trx, emit, name, DEFAULT_ENVIRONMENTS, actor));
  }

  /** Creates a project with the named environments within a caller's transaction (flags as code). */
  async createProjectIn(trx: Executor, emit: Emit, name: string, environmentNames: readonly string[], actor: Actor): Promise<Project> {
    const createdAt = nowIso(this.deps.clock);
    const project: Project = { id: newId(), key: newKey(12), name, createdAt, environments: [] };
    for (const envName of environmentNames) {
      project.environments.push({ id: newId(), projectId: project.id, key: newKey(12), name: envName, createdAt, protected: false, requiredApprovals: 1 });
    }
    await this.deps.store.insertProject(trx, project);
    for (const env of project.environments) await this.deps.store.insertEnvironment(trx, env, project.key);
    await this.deps.audit.record(trx, actor, {
      projectId: project.id,
      entity: 'project',
      entityId: project.key,
      action: 'project.created',
      changes: { name: { after: name }, environments: { after: project.environments.map((e) => e.name) } },
    });
    await emit({ type: 'project.created', projectId: project.id, environmentIds: project.environments.map((e) => e.id) });
    return project;
  }

  async listProjects(): Promise<Project[]> {
    return this.deps.store.listProjects(this.deps.db);
  }

  /** The project with this key, if there is one. */
  async findProject(projectKey: string): Promise<Project | undefined> {
    return this.deps.store.findProjectByKey(this.deps.db, projectKey);
  }

  /** The project with this key; throws not-found otherwise. */
  async getProject(projectKey: string): Promise<Project> {
    const project = await this.deps.store.findProjectByKey(this.deps.db, projectKey);
    if (!project) throw new AppError('not_found', message('projectNotFound', { projectKey }));
    return project;
  }

  /** The environment `environmentKey` of the project; throws not-found for either. */
  async getEnvironment(projectKey: string, environmentKey: string): Promise<{ project: Project; environment: Environment }> {
    const project = await this.getProject(projectKey);
    const environment = project.environments.find((e) => e.key === environmentKey);
    if (!environment) throw new AppError('not_found', message('adminEnvironmentNotFound', { environmentKey, projectKey }));
    return { project, environment };
  }

  /** The environment named by a client's key headers, or undefined when either key is unknown. */
  async findEnvironmentByKeys(projectKey: string, environmentKey: string): Promise<Environment | undefined> {
    return this.deps.store.findEnvironmentByKeys(this.deps.db, projectKey, environmentKey);
  }

  /** Adds an environment; the subscribers of environment.created give it every flag of the project, disabled. */
  async createEnvironment(projectKey: string, name: string, actor: Actor): Promise<Environment> {
    const project = await this.getProject(projectKey);
    return this.deps.events.transaction(this.deps.db, (trx, emit) => this.createEnvironmentIn(trx, emit, project, name, actor));
  }

  /** Adds an environment within a caller's transaction (flags as code); its flags come as in createEnvironment. */
  async createEnvironmentIn(trx: Executor, emit: Emit, project: Project, name: string, actor: Actor): Promise<Environment> {
    const env: Environment = {
      id: newId(),
      projectId: project.id,
      key: newKey(12),
      name,
      createdAt: nowIso(this.deps.clock),
      protected: false,
      requiredApprovals: 1,
    };
    await this.deps.store.insertEnvironment(trx, env, project.key);
    await this.deps.audit.record(trx, actor, {
      projectId: project.id,
      entity: 'environment',
      entityId: env.key,
      environmentKey: env.key,
      action: 'environment.created',
      changes: { name: { after: name } },
    });
    await emit({ type: 'environment.created', projectId: env.projectId, environmentId: env.id, createdAt: env.createdAt });
    return env;
  }

  /**
   * Renames an environment and sets its protection (issue 24): a protected environment refuses direct
   * writes of its flags, which then go through change requests with `requiredApprovals` approvals. The
   * key clients send never changes. Who may change the protection is the route's to decide (owners).
   */
  async updateEnvironment(projectKey: string, environmentKey: string, values: EnvironmentValues, actor: Actor): Promise<Environment> {
    const { project, environment } = await this.getEnvironment(projectKey, environmentKey);
    const next: Environment = {
      ...environment,
      name: values.name ?? environment.name,
      protected: values.protected ?? environment.protected,
      requiredApprovals: values.requiredApprovals ?? environment.requiredApprovals,
    };
    const changes = changesOf(environment, next, ['name', 'protected', 'requiredApprovals']);
    if (Object.keys(changes).length === 0) return environment;
    await this.deps.events.transaction(this.deps.db, async (trx) => {
      await this.deps.store.updateEnvironment(trx, next, projectKey, nowIso(this.deps.clock));
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'environment',
        entityId: environment.key,
        environmentKey: environment.key,
        action: 'environment.updated',
        changes,
      });
    });
    return next;
  }

  /** Renames a project; its key, which its clients send, stays. */
  async renameProject(projectKey: string, name: string, actor: Actor): Promise<Project> {
    const project = await this.getProject(projectKey);
    if (project.name === name) return project;
    await this.deps.events.transaction(this.deps.db, async (trx) => {
      await this.deps.store.renameProject(trx, project.id, name, nowIso(this.deps.clock));
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'project',
        entityId: project.key,
        action: 'project.renamed',
        changes: { name: { before: project.name, after: name } },
      });
    });
    return { ...project, name };
  }

  /**
   * Deletes a project with everything in it (the database's cascades: environments, flags, feedback,
   * segments, API keys, code references, sync tokens). Its audit entries stay: they name no row.
   */
  async deleteProject(projectKey: string, actor: Actor): Promise<void> {
    const project = await this.getProject(projectKey);
    await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      await this.deps.store.deleteProject(trx, project.id);
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'project',
        entityId: project.key,
        action: 'project.deleted',
        changes: { name: { before: project.name }, environments: { before: project.environments.map((e) => e.name) } },
      });
      await emit({ type: 'project.deleted', projectId: project.id, environmentIds: project.environments.map((e) => e.id) });
    });
  }

  /** Deletes an environment with its flag values and sync token; the last one of a project stays, a protected one until it is unprotected. */
  async deleteEnvironment(projectKey: string, environmentKey: string, actor: Actor): Promise<void> {
    const { project, environment } = await this.getEnvironment(projectKey, environmentKey);
    if (project.environments.length <= 1) throw new AppError('conflict', message('lastEnvironment', { environmentKey, projectKey }));
    // What a protected environment serves changes only through review; deleting it would end that
    // without one (issue 29 item 2): an owner unprotects it first, which the audit log records.
    if (environment.protected) throw new AppError('conflict', message('environmentProtectedDelete', { environment: environment.name, projectKey }));
    await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      await this.deps.store.deleteEnvironment(trx, environment.id);
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'environment',
        entityId: environment.key,
        environmentKey: environment.key,
        action: 'environment.deleted',
        changes: { name: { before: environment.name } },
      });
      await emit({ type: 'environment.deleted', projectId: project.id, environmentId: environment.id });
    });
  }
}
