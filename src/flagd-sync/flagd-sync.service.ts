import type { Actor, AuditLog } from '../audit/index.ts';
import { newKey, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import type { FlagdService } from '../documents/index.ts';
import type { ProjectService } from '../projects/index.ts';
import { hashSyncToken, SYNC_TOKEN_PREFIX, type SyncGrant, type SyncTokenInfo, tokenOfSelector, VISIBLE_PREFIX_LENGTH } from './flagd-sync-token.ts';
import type { FlagdSyncStore } from './flagd-sync.store.ts';

export interface FlagdSyncServiceDeps {
  db: Db;
  store: FlagdSyncStore;
  projects: ProjectService;
  /** The environment's flagd definition, the same document as the admin GET .../flagd. */
  flagd: Pick<FlagdService, 'exportEnvironment'>;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
}

/**
 * Sync tokens of flagd in-process providers (issue 21, docs/adr/0027-flagd-sync.md): one per environment,
 * stored as a hash, shown once when created, replaced by rotation and removed by revocation.
 */
export class FlagdSyncService {
  constructor(private readonly deps: FlagdSyncServiceDeps) {}

  /** The environment's token as admins may see it (no secret), or undefined when it has none. */
  async findToken(projectKey: string, environmentKey: string): Promise<SyncTokenInfo | undefined> {
    const { environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    return this.deps.store.find(this.deps.db, environment.id);
  }

  /** Creates the environment's token, replacing (and so revoking) the one it had; the token is returned only here. */
  async rotateToken(projectKey: string, environmentKey: string, actor: Actor): Promise<{ info: SyncTokenInfo; token: string }> {
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    const token = `${SYNC_TOKEN_PREFIX}${newKey(32)}`;
    const info: SyncTokenInfo = { environmentId: environment.id, tokenPrefix: token.slice(0, VISIBLE_PREFIX_LENGTH), createdAt: nowIso(this.deps.clock) };
    await this.deps.db.transaction().execute(async (trx) => {
      const before = await this.deps.store.find(trx, environment.id);
      await this.deps.store.replace(trx, info, hashSyncToken(token));
      // The token is a secret: the log keeps its visible prefix only.
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'environment',
        entityId: environment.key,
        environmentKey,
        action: 'environment.flagd_sync_token_rotated',
        changes: { flagdSyncTokenPrefix: before ? { before: before.tokenPrefix, after: info.tokenPrefix } : { after: info.tokenPrefix } },
      });
    });
    return { info, token };
  }

  /** Removes the environment's token; providers using it are disconnected. Revoking again is harmless. */
  async revokeToken(projectKey: string, environmentKey: string, actor: Actor): Promise<void> {
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    await this.deps.db.transaction().execute(async (trx) => {
      const before = await this.deps.store.find(trx, environment.id);
      if (!before || !(await this.deps.store.delete(trx, environment.id))) return;
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'environment',
        entityId: environment.key,
        environmentKey,
        action: 'environment.flagd_sync_token_revoked',
        changes: { flagdSyncTokenPrefix: { before: before.tokenPrefix } },
      });
    });
  }

  /** The environment a provider's selector gives access to, or undefined for any other selector. */
  async grantOf(selector: string): Promise<SyncGrant | undefined> {
    const token = tokenOfSelector(selector);
    if (!token) return undefined;
    return this.deps.store.grantOf(this.deps.db, hashSyncToken(token));
  }

  /** Which of these token hashes are still valid (revocation reaches open streams through this). */
  async liveHashes(hashes: string[]): Promise<Set<string>> {
    return this.deps.store.liveHashes(this.deps.db, hashes);
  }

  /** The flagd definition served to providers of an environment, as JSON text. */
  async definitionOf(grant: SyncGrant): Promise<string> {
    return JSON.stringify(await this.deps.flagd.exportEnvironment(grant.projectKey, grant.environmentKey));
  }
}
