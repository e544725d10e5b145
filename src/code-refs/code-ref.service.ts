import { nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { ProjectService } from '../projects/index.ts';
import type { CodeReferenceFilter, CodeReferenceUpload, StoredCodeReference } from './code-ref.ts';
import type { CodeRefStore } from './code-ref.store.ts';

export interface CodeRefServiceDeps {
  db: Db;
  store: CodeRefStore;
  projects: ProjectService;
  clock: () => Date;
}

export class CodeRefService {
  constructor(private readonly deps: CodeRefServiceDeps) {}

  /**
   * Stores an upload for the environment named by the client keys (the last check of D12: an unknown
   * environment is 404). The replacement is one transaction.
   */
  async upload(projectKey: string, environmentKey: string, upload: CodeReferenceUpload): Promise<{ slugs: number }> {
    const env = await this.deps.projects.findEnvironmentByKeys(projectKey, environmentKey);
    if (!env) throw new AppError('not_found', message('environmentNotFound', { environmentKey }));
    const updatedAt = nowIso(this.deps.clock);
    await this.deps.db.transaction().execute((trx) => this.deps.store.replace(trx, env.projectId, upload, updatedAt));
    return { slugs: Object.keys(upload.references).length };
  }

  async list(projectKey: string, filter: CodeReferenceFilter): Promise<StoredCodeReference[]> {
    const project = await this.deps.projects.getProject(projectKey);
    return this.deps.store.list(this.deps.db, project.id, filter);
  }
}
