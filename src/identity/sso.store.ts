import type { Executor } from '../db/database.ts';

/** A sign-in under way, as the callback needs it. */
export interface SsoLogin {
  browserHash: string;
  nonce: string;
  codeVerifier: string;
  nextPath: string;
  expiresAt: string;
}

/** Single sign-on's tables: identities at providers and sign-ins under way. */
export class SsoStore {
  async insertLogin(db: Executor, stateHash: string, login: SsoLogin, createdAt: string): Promise<void> {
    await db
      .insertInto('sso_logins')
      .values({
        state_hash: stateHash,
        browser_hash: login.browserHash,
        nonce: login.nonce,
        code_verifier: login.codeVerifier,
        next_path: login.nextPath,
        created_at: createdAt,
        expires_at: login.expiresAt,
      })
      .execute();
  }

  /** Takes the sign-in of a state out (single use: a replayed callback finds nothing). */
  async takeLogin(db: Executor, stateHash: string): Promise<SsoLogin | undefined> {
    const row = await db.deleteFrom('sso_logins').where('state_hash', '=', stateHash).returningAll().executeTakeFirst();
    return row && { browserHash: row.browser_hash, nonce: row.nonce, codeVerifier: row.code_verifier, nextPath: row.next_path, expiresAt: row.expires_at };
  }

  /** Sign-ins under way that have not expired. */
  async countOpenLogins(db: Executor, now: string): Promise<number> {
    const row = await db
      .selectFrom('sso_logins')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async deleteExpiredLogins(db: Executor, now: string): Promise<number> {
    const result = await db.deleteFrom('sso_logins').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** The member linked to an identity. */
  async findLinkedUser(db: Executor, issuer: string, subject: string): Promise<string | undefined> {
    const row = await db.selectFrom('user_identities').select('user_id').where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
    return row?.user_id;
  }

  /** Whether a member is linked to any identity of `issuer`. */
  async isLinked(db: Executor, userId: string, issuer: string): Promise<boolean> {
    const row = await db.selectFrom('user_identities').select('subject').where('user_id', '=', userId).where('issuer', '=', issuer).executeTakeFirst();
    return row !== undefined;
  }

  async link(db: Executor, issuer: string, subject: string, userId: string, now: string): Promise<void> {
    await db.insertInto('user_identities').values({ issuer, subject, user_id: userId, created_at: now, last_sign_in_at: now }).execute();
  }

  async touch(db: Executor, issuer: string, subject: string, now: string): Promise<void> {
    await db.updateTable('user_identities').set({ last_sign_in_at: now }).where('issuer', '=', issuer).where('subject', '=', subject).execute();
  }
}
