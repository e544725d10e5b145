import type { Selectable } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { ApiKey } from './api-key.ts';
import type { ApiKeysTable } from './api-key.table.ts';

const toApiKey = (row: Selectable<ApiKeysTable>): ApiKey => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  tokenPrefix: row.token_prefix,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
});

export class ApiKeyStore {
  async insert(db: Executor, key: ApiKey, tokenHash: string): Promise<void> {
    await db
      .insertInto('api_keys')
      .values({
        id: key.id,
        project_id: key.projectId,
        name: key.name,
        token_hash: tokenHash,
        token_prefix: key.tokenPrefix,
        created_at: key.createdAt,
        revoked_at: key.revokedAt,
      })
      .execute();
  }

  async list(db: Executor, projectId: string): Promise<ApiKey[]> {
    const rows = await db.selectFrom('api_keys').selectAll().where('project_id', '=', projectId).orderBy('created_at').execute();
    return rows.map(toApiKey);
  }

  async find(db: Executor, projectId: string, id: string): Promise<ApiKey | undefined> {
    const row = await db.selectFrom('api_keys').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
    return row && toApiKey(row);
  }

  /** Marks a key revoked: `revoked` now, `already` revoked before, or `missing` when the project has no such key. */
  async revoke(db: Executor, projectId: string, id: string, revokedAt: string): Promise<'revoked' | 'already' | 'missing'> {
    const result = await db
      .updateTable('api_keys')
      .set({ revoked_at: revokedAt })
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) return 'revoked';
    const exists = await db.selectFrom('api_keys').select('id').where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
    return exists ? 'already' : 'missing';
  }

  /** Hashes of the live keys of the project with this client key. */
  async liveHashesOfProject(db: Executor, projectKey: string): Promise<string[]> {
    // No key holds NUL, and PostgreSQL refuses it in a query.
    if (projectKey.includes('\u0000')) return [];
    const rows = await db
      .selectFrom('api_keys')
      .innerJoin('projects', 'projects.id', 'api_keys.project_id')
      .select('api_keys.token_hash')
      .where('projects.key', '=', projectKey)
      .where('api_keys.revoked_at', 'is', null)
      .execute();
    return rows.map((r) => r.token_hash);
  }
}
