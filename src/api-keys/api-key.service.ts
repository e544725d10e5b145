import { newId, newKey, nowIso } from '../db/codec.ts';
import type { Actor, AuditLog } from '../audit/index.ts';
import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { ProjectService } from '../projects/index.ts';
import { hashToken, sameHash } from '../identity/index.ts';
import { type ApiKey, TOKEN_PREFIX } from './api-key.ts';
import type { ApiKeyStore } from './api-key.store.ts';

export interface ApiKeyServiceDeps {
  db: Db;
  store: ApiKeyStore;
  projects: ProjectService;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
}

export class ApiKeyService {
  constructor(private readonly deps: ApiKeyServiceDeps) {}

  /** Creates a key; the token is returned here once and only its hash is kept (contract D11). */
  async create(projectKey: string, name: string, actor: Actor): Promise<{ key: ApiKey; token: string }> {
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
    // The token is a secret: the log records the key's name and visible prefix only.
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.insert(trx, key, hashToken(token));
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'api_key',
        entityId: key.id,
        action: 'api_key.created',
        changes: { name: { after: name }, tokenPrefix: { after: key.tokenPrefix } },
      });
    });
    return { key, token };
  }

  async list(projectKey: string): Promise<ApiKey[]> {
    const project = await this.deps.projects.getProject(projectKey);
    return this.deps.store.list(this.deps.db, project.id);
  }

  /** Revokes a key; revoking it again is harmless. */
  async revoke(projectKey: string, id: string, actor: Actor): Promise<void> {
    const project = await this.deps.projects.getProject(projectKey);
    await this.deps.db.transaction().execute(async (trx) => {
      const key = await this.deps.store.find(trx, project.id, id);
      const outcome = key ? await this.deps.store.revoke(trx, project.id, id, nowIso(this.deps.clock)) : 'missing';
      if (!key || outcome === 'missing') throw new AppError('not_found', message('apiKeyNotFound', { id, projectKey }));
      // Revoking again is harmless and changes nothing: nothing to record. The entry names the key (issue 31 item 12).
      if (outcome === 'revoked')
        await this.deps.audit.record(trx, actor, {
          projectId: project.id,
          entity: 'api_key',
          entityId: id,
          action: 'api_key.revoked',
          changes: { name: { before: key.name } },
        });
    });
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
