import type { Db } from '../db/database.ts';
import { newId, newKey, nowIso } from '../db/codec.ts';
import { AppError, message } from '../errors.ts';
import type { FlagChanges } from '../flags/flag-changes.ts';
import { isUniqueViolation } from '../db/codec.ts';
import { DEFAULT_ENVIRONMENTS, type Environment, type Project } from './project.ts';
import type { ProjectStore } from './project.store.ts';

export interface ProjectServiceDeps {
  db: Db;
  store: ProjectStore;
  changes: FlagChanges;
  /** Runs inside the transaction that creates an environment, to give it every flag of the project. */
  onEnvironmentCreated: (trx: Db, env: Environment) => Promise<void>;
  clock?: () => Date;
}

export class ProjectService {
  constructor(private readonly deps: ProjectServiceDeps) {}

  /** Creates a project with the development, staging and production environments. */
  async createProject(name: string): Promise<Project> {
    const createdAt = nowIso(this.deps.clock);
    const project: Project = { id: newId(), key: newKey(12), name, createdAt, environments: [] };
    for (const envName of DEFAULT_ENVIRONMENTS) {
      project.environments.push({ id: newId(), projectId: project.id, key: newKey(12), name: envName, createdAt });
    }
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.insertProject(trx, project);
      for (const env of project.environments) await this.deps.store.insertEnvironment(trx, env);
    });
    await this.deps.changes.publish({ kind: 'keys' });
    return project;
  }

  async listProjects(): Promise<Project[]> {
    return this.deps.store.listProjects();
  }

  /** The project with this key; throws not-found otherwise. */
  async getProject(projectKey: string, db?: Db): Promise<Project> {
    const project = await this.deps.store.findProjectByKey(projectKey, db);
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
    return this.deps.store.findEnvironmentByKeys(projectKey, environmentKey);
  }

  /** Adds an environment; it receives every flag of the project, disabled. */
  async createEnvironment(projectKey: string, name: string): Promise<Environment> {
    const project = await this.getProject(projectKey);
    const env: Environment = { id: newId(), projectId: project.id, key: newKey(12), name, createdAt: nowIso(this.deps.clock) };
    try {
      await this.deps.db.transaction().execute(async (trx) => {
        await this.deps.store.insertEnvironment(trx, env);
        await this.deps.onEnvironmentCreated(trx, env);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', message('environmentExists', { name, projectKey }));
      throw error;
    }
    await this.deps.changes.publish({ kind: 'keys' });
    return env;
  }
}
