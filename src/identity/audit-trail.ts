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

/**
 * A value an entry records to name what it is about, unchanged by the write (a member's e-mail address on
 * a change of role): the same before and after, so that the log names people, not ids (issue 31 item 12).
 */
export const unchanged = <T>(value: T): { before: T; after: T } => ({ before: value, after: value });
