import { nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { ProjectService } from '../projects/index.ts';
import type { CodeReferenceFilter, CodeReferenceUpload, StoredCodeReference } from './code-ref.ts';
import type { CodeRefStore } from './code-ref.store.ts';

export class CodeRefService {
  constructor(
    private readonly db: Db,
    private readonly store: CodeRefStore,
    private readonly projects: ProjectService,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /**
   * Stores an upload for the environment named by the client keys (the last check of D12: an unknown
   * environment is 404). The replacement is one transaction.
   */
  async upload(projectKey: string, environmentKey: string, upload: CodeReferenceUpload): Promise<{ slugs: number }> {
    const env = await this.projects.findEnvironmentByKeys(projectKey, environmentKey);
    if (!env) throw new AppError('not_found', message('environmentNotFound', { environmentKey }));
    const updatedAt = nowIso(this.clock);
    await this.db.transaction().execute((trx) => this.store.replace(trx, env.projectId, upload, updatedAt));
    return { slugs: Object.keys(upload.references).length };
  }

  async list(projectKey: string, filter: CodeReferenceFilter): Promise<StoredCodeReference[]> {
    const project = await this.projects.getProject(projectKey);
    return this.store.list(project.id, filter);
  }
}
