import type { Kysely } from 'kysely';

// Frozen once landed. Sign-in under attack (issue 20, docs/adr/0022-sign-in-under-attack.md):
// - `throttles`: fixed-window attempt counters (per account, per client address) shared by every
//   instance, incremented atomically before the password work they guard;
// - `sessions.admin_token_generation`: which admin token opened a session (null for a user's), so that
//   rotating the token ends the sessions it opened;
// - `access_tokens.expires_at`: personal access tokens expire. Tokens made before this migration expire
//   90 days after it runs.
const EXISTING_TOKENS_TTL_MS = 90 * 86_400_000;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('throttles')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('hits', 'integer', (c) => c.notNull())
    .addColumn('window_ends_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('throttles_window_idx').on('throttles').column('window_ends_at').execute();
  await db.schema.alterTable('sessions').addColumn('admin_token_generation', 'text').execute();
  await db.schema.alterTable('access_tokens').addColumn('expires_at', 'text').execute();
  const expiresAt = new Date(Date.now() + EXISTING_TOKENS_TTL_MS).toISOString();
  await (db as Kysely<{ access_tokens: { expires_at: string | null } }>).updateTable('access_tokens').set({ expires_at: expiresAt }).execute();
}
