import type { Kysely } from 'kysely';

// Frozen once landed. Slack and Discord incoming-webhook presets per form (issue 12): delivered by the
// outbox like webhooks, in the chat service's message format and without a signature.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('forms').addColumn('slack_webhook_url', 'text').execute();
  await db.schema.alterTable('forms').addColumn('discord_webhook_url', 'text').execute();
}
