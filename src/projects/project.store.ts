import type { Selectable } from 'kysely';
import { isUniqueViolation } from '../db/codec.ts';
import type { Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { Environment, Project } from './project.ts';
import type { EnvironmentsTable, ProjectsTable } from './project.table.ts';

const toEnvironment = (row: Selectable<EnvironmentsTable>): Environment => ({
  id: row.id,
  projectId: row.project_id,
  key: row.key,
  name: row.name,
  createdAt: row.created_at,
  protected: row.protected === 1,
  requiredApprovals: row.required_approvals,
});

const toProject = (row: Selectable<ProjectsTable>, environments: Environment[]): Project => ({
  id: row.id,
  key: row.key,
  name: row.name,
  createdAt: row.created_at,
  environments,
});

export class ProjectStore {
  async insertProject(db: Executor, project: Project): Promise<void> {
    await db
      .insertInto('projects')
      .values({ id: project.id, key: project.key, name: project.name, created_at: project.createdAt, updated_at: project.createdAt })
      .execute();
  }

  /** Inserts an environment; a name the project already has is a conflict (`projectKey` names it in the error). */
  async insertEnvironment(db: Executor, env: Environment, projectKey: string): Promise<void> {
    try {
      await db
        .insertInto('environments')
        .values({
          id: env.id,
          project_id: env.projectId,
          key: env.key,
          name: env.name,
          created_at: env.createdAt,
          updated_at: env.createdAt,
          protected: env.protected ? 1 : 0,
          required_approvals: env.requiredApprovals,
        })
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', message('environmentExists', { name: env.name, projectKey }));
      throw error;
    }
  }

  /** Writes an environment's name and protection; a name the project already has is a conflict. */
  async updateEnvironment(db: Executor, env: Environment, projectKey: string, updatedAt: string): Promise<void> {
    try {
      await db
        .updateTable('environments')
        .set({ name: env.name, protected: env.protected ? 1 : 0, required_approvals: env.requiredApprovals, updated_at: updatedAt })
        .where('id', '=', env.id)
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', message('environmentExists', { name: env.name, projectKey }));
      throw error;
    }
  }

  async findProjectByKey(db: Executor, key: string): Promise<Project | undefined> {
    const row = await db.selectFrom('projects').selectAll().where('key', '=', key).executeTakeFirst();
    if (!row) return undefined;
    const envs = await db.selectFrom('environments').selectAll().where('project_id', '=', row.id).orderBy('created_at').orderBy('id').execute();
    return toProject(row, envs.map(toEnvironment));
  }

  async listProjects(db: Executor): Promise<Project[]> {
    const rows = await db.selectFrom('projects').selectAll().orderBy('created_at').orderBy('id').execute();
    const envs = await db.selectFrom('environments').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => toProject(row, envs.filter((e) => e.project_id === row.id).map(toEnvironment)));
  }

  /** The environment named by a client's key headers, or undefined when either key is unknown. */
  async findEnvironmentByKeys(db: Executor, projectKey: string, environmentKey: string): Promise<Environment | undefined> {
    // No key holds NUL, and PostgreSQL refuses it in a query: such keys name nothing.
    if (projectKey.includes('\u0000') || environmentKey.includes('\u0000')) return undefined;
    const row = await db
      .selectFrom('environments')
      .innerJoin('projects', 'projects.id', 'environments.project_id')
      .selectAll('environments')
      .where('projects.key', '=', projectKey)
      .where('environments.key', '=', environmentKey)
      .executeTakeFirst();
    return row ? toEnvironment(row) : undefined;
  }

  async renameProject(db: Executor, projectId: string, name: string, updatedAt: string): Promise<void> {
    await db.updateTable('projects').set({ name, updated_at: updatedAt }).where('id', '=', projectId).execute();
  }

  /** Deletes the project; the foreign keys' cascades delete what belongs to it. */
  async deleteProject(db: Executor, projectId: string): Promise<void> {
    await db.deleteFrom('projects').where('id', '=', projectId).execute();
  }

  /** Deletes the environment; the foreign keys' cascades delete its flag rows and sync token. */
  async deleteEnvironment(db: Executor, environmentId: string): Promise<void> {
    await db.deleteFrom('environments').where('id', '=', environmentId).execute();
  }
}
