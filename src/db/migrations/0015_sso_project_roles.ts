import type { Kysely } from 'kysely';

// Frozen once landed. Single sign-on (docs/adr/0032-identity-and-sso.md) and roles per project
// (docs/adr/0033-project-roles.md), issue 20:
// - `user_identities`: a member's identity at an OpenID provider, matched by issuer and subject, never
//   by e-mail address;
// - `sso_logins`: sign-ins under way (state, nonce, PKCE verifier), bound to the browser that started
//   them by the hash of a cookie, single use, expiring;
// - `sessions.sign_in_method`: how a session was opened (`password`, `admin_token`, `sso`), so that
//   signing out of an SSO session can offer the provider's logout;
// - `project_roles`: a member's role on one project (viewer, editor, admin);
// - `forms.project_id`: the project a form belongs to; null for a form of the whole instance.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('user_identities')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_sign_in_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_identities_pk', ['issuer', 'subject'])
    .execute();
  await db.schema.createIndex('user_identities_user_idx').on('user_identities').column('user_id').execute();
  await db.schema
    .createTable('sso_logins')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('next_path', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sso_logins_expires_idx').on('sso_logins').column('expires_at').execute();
  await db.schema.alterTable('sessions').addColumn('sign_in_method', 'text').execute();
  await db.schema
    .createTable('project_roles')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('project_roles_pk', ['user_id', 'project_id'])
    .execute();
  await db.schema.createIndex('project_roles_project_idx').on('project_roles').column('project_id').execute();
  await db.schema
    .alterTable('forms')
    .addColumn('project_id', 'text', (c) => c.references('projects.id').onDelete('set null'))
    .execute();
}
