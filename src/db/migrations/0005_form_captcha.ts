import type { Kysely } from 'kysely';

// Frozen once landed. CAPTCHA verification per form (issue 12): the provider, its secret (write-only in
// the admin API) and the lowest score accepted (reCAPTCHA v3, hCaptcha Enterprise).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('forms').addColumn('captcha_provider', 'text').execute();
  await db.schema.alterTable('forms').addColumn('captcha_secret', 'text').execute();
  await db.schema.alterTable('forms').addColumn('captcha_min_score', 'double precision').execute();
}
