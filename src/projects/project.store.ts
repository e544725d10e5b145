import type { Selectable } from 'kysely';
import type { Db } from '../db/database.ts';
import type { Environment, Project } from './project.ts';
import type { EnvironmentsTable, ProjectsTable } from './project.table.ts';

const toEnvironment = (row: Selectable<EnvironmentsTable>): Environment => ({
  id: row.id,
  projectId: row.project_id,
  key: row.key,
  name: row.name,
  createdAt: row.created_at,
});

const toProject = (row: Selectable<ProjectsTable>, environments: Environment[]): Project => ({
  id: row.id,
  key: row.key,
  name: row.name,
  createdAt: row.created_at,
  environments,
});

export class ProjectStore {
  constructor(private readonly db: Db) {}

  async insertProject(db: Db, project: Project): Promise<void> {
    await db
      .insertInto('projects')
      .values({ id: project.id, key: project.key, name: project.name, created_at: project.createdAt, updated_at: project.createdAt })
      .execute();
  }

  async insertEnvironment(db: Db, env: Environment): Promise<void> {
    await db
      .insertInto('environments')
      .values({ id: env.id, project_id: env.projectId, key: env.key, name: env.name, created_at: env.createdAt, updated_at: env.createdAt })
      .execute();
  }

  async findProjectByKey(key: string, db: Db = this.db): Promise<Project | undefined> {
    const row = await db.selectFrom('projects').selectAll().where('key', '=', key).executeTakeFirst();
    if (!row) return undefined;
    const envs = await db
      .selectFrom('environments')
      .selectAll()
      .where('project_id', '=', row.id)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return toProject(row, envs.map(toEnvironment));
  }

  async listProjects(): Promise<Project[]> {
    const rows = await this.db.selectFrom('projects').selectAll().orderBy('created_at').orderBy('id').execute();
    const envs = await this.db.selectFrom('environments').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => toProject(row, envs.filter((e) => e.project_id === row.id).map(toEnvironment)));
  }

  /** The environment named by a client's key headers, or undefined when either key is unknown. */
  async findEnvironmentByKeys(projectKey: string, environmentKey: string): Promise<Environment | undefined> {
    const row = await this.db
      .selectFrom('environments')
      .innerJoin('projects', 'projects.id', 'environments.project_id')
      .selectAll('environments')
      .where('projects.key', '=', projectKey)
      .where('environments.key', '=', environmentKey)
      .executeTakeFirst();
    return row ? toEnvironment(row) : undefined;
  }
}
