import { newId, newKey, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { ProjectService } from '../projects/index.ts';
import { type ApiKey, hashToken, sameHash, TOKEN_PREFIX } from './api-key.ts';
import type { ApiKeyStore } from './api-key.store.ts';

export interface ApiKeyServiceDeps {
  db: Db;
  store: ApiKeyStore;
  projects: ProjectService;
  clock: () => Date;
}

export class ApiKeyService {
  constructor(private readonly deps: ApiKeyServiceDeps) {}

  /** Creates a key; the token is returned here once and only its hash is kept (contract D11). */
  async create(projectKey: string, name: string): Promise<{ key: ApiKey; token: string }> {
    const project = await this.deps.projects.getProject(projectKey);
    const token = `${TOKEN_PREFIX}${newKey(24)}`;
    const key: ApiKey = {
      id: newId(),
      projectId: project.id,
      name,
      tokenPrefix: token.slice(0, TOKEN_PREFIX.length + 4),
      createdAt: nowIso(this.deps.clock),
      revokedAt: null,
    };
    await this.deps.store.insert(this.deps.db, key, hashToken(token));
    return { key, token };
  }

  async list(projectKey: string): Promise<ApiKey[]> {
    const project = await this.deps.projects.getProject(projectKey);
    return this.deps.store.list(this.deps.db, project.id);
  }

  /** Revokes a key; revoking it again is harmless. */
  async revoke(projectKey: string, id: string): Promise<void> {
    const project = await this.deps.projects.getProject(projectKey);
    if (!(await this.deps.store.revoke(this.deps.db, project.id, id, nowIso(this.deps.clock)))) {
      throw new AppError('not_found', message('apiKeyNotFound', { id, projectKey }));
    }
  }

  /**
   * True when `token` is a live key of the project with this client key. Every live hash of the
   * project is compared in constant time, so timing tells nothing about the token.
   */
  async verify(projectKey: string, token: string): Promise<boolean> {
    const hash = hashToken(token);
    const hashes = await this.deps.store.liveHashesOfProject(this.deps.db, projectKey);
    let found = false;
    for (const candidate of hashes) found = sameHash(candidate, hash) || found;
    return found;
  }
}
