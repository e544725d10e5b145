import type { Executor } from '../db/database.ts';
import type { SyncGrant, SyncTokenInfo } from './flagd-sync-token.ts';

export class FlagdSyncStore {
  async find(db: Executor, environmentId: string): Promise<SyncTokenInfo | undefined> {
    const row = await db.selectFrom('flagd_sync_tokens').selectAll().where('environment_id', '=', environmentId).executeTakeFirst();
    return row ? { environmentId: row.environment_id, tokenPrefix: row.token_prefix, createdAt: row.created_at } : undefined;
  }

  /** Sets the environment's token, replacing the one it had. */
  async replace(db: Executor, info: SyncTokenInfo, tokenHash: string): Promise<void> {
    await db.deleteFrom('flagd_sync_tokens').where('environment_id', '=', info.environmentId).execute();
    await db
      .insertInto('flagd_sync_tokens')
      .values({ environment_id: info.environmentId, token_hash: tokenHash, token_prefix: info.tokenPrefix, created_at: info.createdAt })
      .execute();
  }

  /** Whether the environment had a token. */
  async delete(db: Executor, environmentId: string): Promise<boolean> {
    const result = await db.deleteFrom('flagd_sync_tokens').where('environment_id', '=', environmentId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async grantOf(db: Executor, tokenHash: string): Promise<SyncGrant | undefined> {
    const row = await db
      .selectFrom('flagd_sync_tokens')
      .innerJoin('environments', 'environments.id', 'flagd_sync_tokens.environment_id')
      .innerJoin('projects', 'projects.id', 'environments.project_id')
      .select([
        'environments.id as environmentId',
        'projects.key as projectKey',
        'environments.key as environmentKey',
        'flagd_sync_tokens.token_hash as tokenHash',
      ])
      .where('flagd_sync_tokens.token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row;
  }

  /** Which of these hashes still belong to a token. */
  async liveHashes(db: Executor, hashes: string[]): Promise<Set<string>> {
    if (hashes.length === 0) return new Set();
    const rows = await db.selectFrom('flagd_sync_tokens').select('token_hash').where('token_hash', 'in', hashes).execute();
    return new Set(rows.map((r) => r.token_hash));
  }
}
