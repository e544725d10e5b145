import type { Kysely } from 'kysely';

// Frozen once landed. Issue 34, the intake half (docs/adr/0046-spam-checks.md,
// docs/adr/0047-formspree-compatibility.md): a form's field rules, file policy and spam checks (JSON
// text, null: off); a submission's spam reasons (JSON text), the fingerprint of its normalised fields
// (duplicate detection), and the webdriver flag a Formspree client reported (recorded, never a verdict);
// the proof-of-work solutions already used (a solution counts once, until its challenge expires).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('forms').addColumn('field_rules', 'text').execute();
  await db.schema.alterTable('forms').addColumn('file_policy', 'text').execute();
  await db.schema.alterTable('forms').addColumn('spam_checks', 'text').execute();
  await db.schema.alterTable('submissions').addColumn('spam_reasons', 'text').execute();
  await db.schema.alterTable('submissions').addColumn('fingerprint', 'text').execute();
  await db.schema.alterTable('submissions').addColumn('webdriver', 'integer').execute();
  await db.schema.createIndex('submissions_form_fingerprint_idx').on('submissions').columns(['form_id', 'fingerprint', 'created_at']).execute();
  await db.schema.createIndex('submissions_form_ip_idx').on('submissions').columns(['form_id', 'ip', 'created_at']).execute();
  await db.schema
    .createTable('form_pow_solutions')
    .addColumn('signature', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('form_pow_solutions_expires_idx').on('form_pow_solutions').column('expires_at').execute();
}
