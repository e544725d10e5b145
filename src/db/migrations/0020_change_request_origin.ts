import type { Kysely } from 'kysely';

// Frozen once landed. Issue 21 (docs/adr/0038-flags-as-code.md): which feature opened a change request.
// 'flags_as_code' for the requests an apply opens for protected environments, so that the next apply of
// a document finds its open request and keeps or updates it instead of opening another; null for the
// others (opened by a member, a promotion or a revert, and every request opened before this migration).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('change_requests').addColumn('origin', 'text').execute();
}
