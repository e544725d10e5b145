import { newId, newKey, nowIso } from '../db/codec.ts';
import { AppError, message } from '../errors.ts';
import type { ProjectService } from '../projects/project.service.ts';
import { type ApiKey, hashToken, sameHash, TOKEN_PREFIX } from './api-key.ts';
import type { ApiKeyStore } from './api-key.store.ts';

export class ApiKeyService {
  constructor(
    private readonly store: ApiKeyStore,
    private readonly projects: ProjectService,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Creates a key; the token is returned here once and only its hash is kept (contract D11). */
  async create(projectKey: string, name: string): Promise<{ key: ApiKey; token: string }> {
    const project = await this.projects.getProject(projectKey);
    const token = `${TOKEN_PREFIX}${newKey(24)}`;
    const key: ApiKey = {
      id: newId(),
      projectId: project.id,
      name,
      tokenPrefix: token.slice(0, TOKEN_PREFIX.length + 4),
      createdAt: nowIso(this.clock),
      revokedAt: null,
    };
    await this.store.insert(key, hashToken(token));
    return { key, token };
  }

  async list(projectKey: string): Promise<ApiKey[]> {
    const project = await this.projects.getProject(projectKey);
    return this.store.list(project.id);
  }

  /** Revokes a key; revoking it again is harmless. */
  async revoke(projectKey: string, id: string): Promise<void> {
    const project = await this.projects.getProject(projectKey);
    if (!(await this.store.revoke(project.id, id, nowIso(this.clock)))) {
      throw new AppError('not_found', message('apiKeyNotFound', { id, projectKey }));
    }
  }

  /**
   * True when `token` is a live key of the project with this client key. Every live hash of the
   * project is compared in constant time, so timing tells nothing about the token.
   */
  async verify(projectKey: string, token: string): Promise<boolean> {
    const hash = hashToken(token);
    const hashes = await this.store.liveHashesOfProject(projectKey);
    let found = false;
    for (const candidate of hashes) found = sameHash(candidate, hash) || found;
    return found;
  }
}
