import type { Executor } from '../db/database.ts';
import type { ProjectRole } from './access.ts';

/** Members' roles per project (`project_roles`, migration 0015). */
export class ProjectRoleStore {
  async find(db: Executor, userId: string, projectId: string): Promise<ProjectRole | undefined> {
    const row = await db.selectFrom('project_roles').select('role').where('user_id', '=', userId).where('project_id', '=', projectId).executeTakeFirst();
    return row?.role as ProjectRole | undefined;
  }

  async listOfUser(db: Executor, userId: string): Promise<Map<string, ProjectRole>> {
    const rows = await db.selectFrom('project_roles').select(['project_id', 'role']).where('user_id', '=', userId).execute();
    return new Map(rows.map((r) => [r.project_id, r.role as ProjectRole]));
  }

  /** Sets a member's role on a project; answers the role it replaced. */
  async put(db: Executor, userId: string, projectId: string, role: ProjectRole, now: string): Promise<ProjectRole | undefined> {
    const before = await this.find(db, userId, projectId);
    await db
      .insertInto('project_roles')
      .values({ user_id: userId, project_id: projectId, role, created_at: now })
      .onConflict((oc) => oc.columns(['user_id', 'project_id']).doUpdateSet({ role }))
      .execute();
    return before;
  }

  async delete(db: Executor, userId: string, projectId: string): Promise<ProjectRole | undefined> {
    const row = await db.deleteFrom('project_roles').where('user_id', '=', userId).where('project_id', '=', projectId).returning('role').executeTakeFirst();
    return row?.role as ProjectRole | undefined;
  }
}
