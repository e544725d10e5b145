import { nowIso } from '../db/codec.ts';
import type { Actor, AuditLog } from '../audit/index.ts';
import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { FlagUsage } from '../usage/index.ts';
import type { FlagService } from '../flags/index.ts';
import type { ProjectService } from '../projects/index.ts';
import type { CodeReferenceFilter, CodeReferenceRemoval, CodeReferenceUpload, StoredCodeReference, UploadScope } from './code-ref.ts';
import type { CodeRefStore } from './code-ref.store.ts';
import { staleFlags, type StaleReport } from './stale-flags.ts';

export interface CodeRefServiceDeps {
  db: Db;
  store: CodeRefStore;
  projects: ProjectService;
  flags: Pick<FlagService, 'listFlags'>;
  /** When evaluations began to be counted, for the `not_evaluated` rule. */
  usage: Pick<FlagUsage, 'countingSince'>;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
}

export class CodeRefService {
  constructor(private readonly deps: CodeRefServiceDeps) {}

  /**
   * Stores an upload for the environment named by the client keys (the last check of D12: an unknown
   * environment is 404). The replacement is one transaction.
   */
  async upload(
    projectKey: string,
    environmentKey: string,
    upload: CodeReferenceUpload,
    scope: UploadScope = 'slugs',
  ): Promise<{ slugs: number; removedSlugs: string[] }> {
    const env = await this.deps.projects.findEnvironmentByKeys(projectKey, environmentKey);
    if (!env) throw new AppError('not_found', message('environmentNotFound', { environmentKey }));
    const updatedAt = nowIso(this.deps.clock);
    const { removedSlugs } = await this.deps.db.transaction().execute((trx) => this.deps.store.replace(trx, env.projectId, upload, scope, updatedAt));
    return { slugs: Object.keys(upload.references).length, removedSlugs };
  }

  async list(projectKey: string, filter: CodeReferenceFilter): Promise<StoredCodeReference[]> {
    const project = await this.deps.projects.getProject(projectKey);
    return this.deps.store.list(this.deps.db, project.id, filter);
  }

  async listRemovals(projectKey: string, filter: CodeReferenceFilter): Promise<CodeReferenceRemoval[]> {
    const project = await this.deps.projects.getProject(projectKey);
    return this.deps.store.listRemovals(this.deps.db, project.id, filter);
  }

  /** Forgets a branch deleted in git: its references and removal records, in every projectName or one. */
  async deleteBranch(projectKey: string, branch: string, projectName: string | undefined, actor: Actor): Promise<{ deleted: number }> {
    const project = await this.deps.projects.getProject(projectKey);
    const deleted = await this.deps.db.transaction().execute(async (trx) => {
      const count = await this.deps.store.deleteBranch(trx, project.id, branch, projectName);
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'code_refs',
        entityId: branch,
        action: 'code_refs.branch_deleted',
        changes: { projectName: { before: projectName ?? null }, references: { before: count } },
      });
      return count;
    });
    return { deleted };
  }

  /** The flags of a project that look ready to clean up, with the rule each matched (stale-flags.ts). */
  async staleReport(projectKey: string, unchangedDays: number, unevaluatedDays: number): Promise<StaleReport> {
    const project = await this.deps.projects.getProject(projectKey);
    const [flags, references, removals, uploaded, usageCountedSince] = await Promise.all([
      this.deps.flags.listFlags(projectKey),
      this.deps.store.list(this.deps.db, project.id, {}),
      this.deps.store.listRemovals(this.deps.db, project.id, {}),
      this.deps.store.hasAny(this.deps.db, project.id),
      this.deps.usage.countingSince(),
    ]);
    return staleFlags({
      flags,
      references,
      removals,
      codeRefsUploaded: uploaded,
      unchangedDays,
      unevaluatedDays,
      usageCountedSince: usageCountedSince ?? null,
      now: this.deps.clock(),
    });
  }
}
