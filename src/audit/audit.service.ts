import { setImmediate as yieldToRequests } from 'node:timers/promises';
import { newId, nowIso } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import type { Cursor, Page } from '../db/paging.ts';
import type { DomainEvents } from '../events/index.ts';
import { pageOf } from '../db/paging.ts';
import type { Actor, AuditEntity, AuditEntry, AuditFilter, AuditInput, FieldChange } from './audit.ts';
import type { AuditStore } from './audit.store.ts';

export interface AuditLogDeps {
  db: Db;
  store: AuditStore;
  clock: () => Date;
  /** Entries older than this many days are deleted by the retention job; 0 keeps them forever. */
  retentionDays: number;
  /** Announces every entry as `audit.recorded` within its transaction (project webhooks queue their deliveries there). */
  events?: Pick<DomainEvents, 'runInTransaction'>;
}

/**
 * The audit log (issue 13, docs/adr/0020-audit-log.md): every write of the admin API appends one entry
 * in the write's own transaction, so a write that fails leaves none. Entries are never changed; the
 * only deletion is the retention setting's.
 */
export class AuditLog {
  constructor(private readonly deps: AuditLogDeps) {}

  async record(trx: Executor, actor: Actor, input: AuditInput): Promise<void> {
    const row = {
      id: newId(),
      created_at: nowIso(this.deps.clock),
      actor_type: actor.type,
      actor_id: actor.id,
      actor_label: actor.label,
      project_id: input.projectId ?? null,
      entity: input.entity,
      entity_id: input.entityId,
      environment_key: input.environmentKey ?? null,
      action: input.action,
      changes: JSON.stringify(input.changes ?? {}),
    };
    await this.deps.store.insert(trx, row);
    await this.deps.events?.runInTransaction(trx, {
      type: 'audit.recorded',
      entry: {
        id: row.id,
        at: row.created_at,
        actor: { type: actor.type, id: actor.id, label: actor.label },
        projectId: row.project_id,
        entity: row.entity,
        entityId: row.entity_id,
        environmentKey: row.environment_key,
        action: row.action,
        changes: input.changes ?? {},
      },
    });
  }

  /** Newest first. An unknown project matches nothing. */
  async list(filter: AuditFilter, page: { after: Cursor | undefined; limit: number }): Promise<Page<AuditEntry>> {
    const rows = await this.deps.store.list(this.deps.db, filter, page.limit, page.after);
    const entries = rows.map((r) => ({
      id: r.id,
      createdAt: r.created_at,
      at: r.created_at,
      actor: { type: r.actor_type as Actor['type'], id: r.actor_id, label: r.actor_label },
      projectKey: r.project_key,
      entity: r.entity as AuditEntity,
      entityId: r.entity_id,
      environmentKey: r.environment_key,
      action: r.action,
      changes: JSON.parse(r.changes) as Record<string, FieldChange>,
    }));
    const cut = pageOf(entries, page.limit);
    return { items: cut.items.map(({ createdAt: _createdAt, ...entry }) => entry), next: cut.next };
  }

  /** One pass of the retention setting, in batches with a turn of the event loop between them. */
  async prune(): Promise<number> {
    if (this.deps.retentionDays <= 0) return 0;
    const before = new Date(this.deps.clock().getTime() - this.deps.retentionDays * 86_400_000).toISOString();
    let total = 0;
    for (;;) {
      const deleted = await this.deps.store.deleteOlderThan(this.deps.db, before, 1000);
      total += deleted;
      if (deleted < 1000) return total;
      await yieldToRequests();
    }
  }
}
