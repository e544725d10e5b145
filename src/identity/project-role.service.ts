import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { ProjectRole } from './access.ts';
import type { AccountStore } from './account.store.ts';
import type { Actor } from './actor.ts';
import { type AuditTrail, unchanged } from './audit-trail.ts';
import type { ProjectDirectory } from './project-directory.ts';
import type { ProjectRoleStore } from './project-role.store.ts';

export interface ProjectRoleServiceDeps {
  db: Db;
  store: ProjectRoleStore;
  accounts: AccountStore;
  projects: ProjectDirectory;
  audit: AuditTrail;
  clock: () => Date;
}

/** One of a member's project roles, as the API shows it. */
export interface ProjectRoleView {
  projectKey: string;
  projectName: string;
  role: ProjectRole;
}

/**
 * Roles per project (docs/adr/0033-project-roles.md): an owner gives a member a role on some projects
 * only, on top of (or instead of, with the instance role `none`) their instance-wide role. Audited.
 */
export class ProjectRoleService {
  constructor(private readonly deps: ProjectRoleServiceDeps) {}

  /** The member's role on a project, if any. */
  async roleOn(userId: string, projectId: string): Promise<ProjectRole | undefined> {
    return this.deps.store.find(this.deps.db, userId, projectId);
  }

  /** The member's roles by project id. */
  async rolesOf(userId: string): Promise<Map<string, ProjectRole>> {
    return this.deps.store.listOfUser(this.deps.db, userId);
  }

  async list(userId: string): Promise<ProjectRoleView[]> {
    await this.getUser(userId);
    const roles = await this.rolesOf(userId);
    return (await this.deps.projects.listProjects())
      .filter((p) => roles.has(p.id))
      .map((p) => ({ projectKey: p.key, projectName: p.name, role: roles.get(p.id)! }));
  }

  async set(userId: string, projectKey: string, role: ProjectRole, actor: Actor): Promise<ProjectRoleView> {
    const user = await this.getUser(userId);
    const project = await this.getProject(projectKey);
    await this.deps.db.transaction().execute(async (trx) => {
      const before = await this.deps.store.put(trx, user.id, project.id, role, this.deps.clock().toISOString());
      if (before === role) return;
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'member',
        entityId: user.id,
        action: 'member.project_role_set',
        changes: { email: unchanged(user.email), projectRole: before ? { before, after: role } : { after: role } },
      });
    });
    return { projectKey: project.key, projectName: project.name, role };
  }

  async remove(userId: string, projectKey: string, actor: Actor): Promise<void> {
    const user = await this.getUser(userId);
    const project = await this.getProject(projectKey);
    await this.deps.db.transaction().execute(async (trx) => {
      const before = await this.deps.store.delete(trx, user.id, project.id);
      if (!before) throw new AppError('not_found', message('projectRoleNotFound', { projectKey }));
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'member',
        entityId: user.id,
        action: 'member.project_role_removed',
        changes: { email: unchanged(user.email), projectRole: { before } },
      });
    });
  }

  private async getUser(id: string) {
    const user = await this.deps.accounts.findUser(this.deps.db, id);
    if (!user) throw new AppError('not_found', message('userNotFound', { id }));
    return user;
  }

  private async getProject(projectKey: string) {
    const project = await this.deps.projects.findProject(projectKey);
    if (!project) throw new AppError('not_found', message('projectNotFound', { projectKey }));
    return project;
  }
}
