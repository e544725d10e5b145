import type { Executor } from '../db/database.ts';
import { type Cursor, newestFirst } from '../db/paging.ts';
import type { AuditLogTable } from './audit.table.ts';

export interface AuditRowFilter {
  projectKey?: string;
  entity?: string;
  entityId?: string;
  actorId?: string;
  actorType?: string;
  /** Entities left out (those only owners may read). */
  excludeEntities?: readonly string[];
  /** Only entries of these projects (a member with roles on single projects only). */
  projectIds?: readonly string[];
  since?: string;
  until?: string;
}

export class AuditStore {
  async insert(trx: Executor, row: AuditLogTable): Promise<void> {
    await trx.insertInto('audit_log').values(row).execute();
  }

  async list(db: Executor, filter: AuditRowFilter, limit: number, after: Cursor | undefined): Promise<Array<AuditLogTable & { project_key: string | null }>> {
    // No join: newestFirst orders and pages by the unqualified created_at and id of this table.
    let query = db
      .selectFrom('audit_log')
      .selectAll()
      .select((eb) => eb.selectFrom('projects').select('projects.key').whereRef('projects.id', '=', 'audit_log.project_id').as('project_key'));
    if (filter.projectKey) {
      const key = filter.projectKey;
      query = query.where('project_id', 'in', (eb) => eb.selectFrom('projects').select('projects.id').where('projects.key', '=', key));
    }
    if (filter.projectIds)
      query =
        filter.projectIds.length > 0
          ? query.where('project_id', 'in', [...filter.projectIds])
          : query.where('project_id', 'is', null).where('project_id', 'is not', null);
    if (filter.entity) query = query.where('entity', '=', filter.entity);
    if (filter.excludeEntities?.length) query = query.where('entity', 'not in', [...filter.excludeEntities]);
    if (filter.entityId) query = query.where('entity_id', '=', filter.entityId);
    if (filter.actorId) query = query.where('actor_id', '=', filter.actorId);
    if (filter.actorType) query = query.where('actor_type', '=', filter.actorType);
    if (filter.since) query = query.where('created_at', '>=', filter.since);
    if (filter.until) query = query.where('created_at', '<', filter.until);
    return newestFirst(query, limit, after).execute();
  }

  /** Deletes entries older than `before`, at most `batch` of them; answers how many went. */
  async deleteOlderThan(db: Executor, before: string, batch: number): Promise<number> {
    const ids = await db.selectFrom('audit_log').select('id').where('created_at', '<', before).orderBy('created_at').limit(batch).execute();
    if (ids.length === 0) return 0;
    const result = await db
      .deleteFrom('audit_log')
      .where(
        'id',
        'in',
        ids.map((r) => r.id),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
