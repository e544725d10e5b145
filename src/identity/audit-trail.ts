import type { Executor } from '../db/database.ts';
import type { Actor } from './actor.ts';

/**
 * The audit log as identity writes to it (a port owned by this capability, so that the audit log may
 * depend on identity for its `Actor` without a cycle); compose passes the AuditLog itself.
 */
export interface AuditTrail {
  record(
    trx: Executor,
    actor: Actor,
    input: {
      entity: 'member' | 'invitation' | 'access_token' | 'settings' | 'sign_in';
      entityId: string;
      action: string;
      projectId?: string | null;
      changes?: Record<string, { before?: unknown; after?: unknown }>;
    },
  ): Promise<void>;
}
