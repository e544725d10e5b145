import type { Executor } from '../db/database.ts';
import type { Session, SignInMethod } from './session.ts';

export class SessionStore {
  async insert(db: Executor, session: Session, tokenHash: string): Promise<void> {
    await db
      .insertInto('sessions')
      .values({
        id: session.id,
        token_hash: tokenHash,
        created_at: session.createdAt,
        expires_at: session.expiresAt,
        user_id: session.userId,
        admin_token_generation: session.adminTokenGeneration,
        sign_in_method: session.signInMethod,
      })
      .execute();
  }

  /** The session with this token hash, unless it has expired at `now`. */
  async findLive(db: Executor, tokenHash: string, now: string): Promise<Session | undefined> {
    const row = await db.selectFrom('sessions').selectAll().where('token_hash', '=', tokenHash).where('expires_at', '>', now).executeTakeFirst();
    return (
      row && {
        id: row.id,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        userId: row.user_id,
        adminTokenGeneration: row.admin_token_generation,
        signInMethod: row.sign_in_method as SignInMethod | null,
      }
    );
  }

  async deleteByHash(db: Executor, tokenHash: string): Promise<void> {
    await db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
  }

  /** Ends every session of a user but the one with `keepHash` (a password change signs out other browsers). */
  async deleteOfUser(db: Executor, userId: string, keepHash?: string): Promise<void> {
    let query = db.deleteFrom('sessions').where('user_id', '=', userId);
    if (keepHash) query = query.where('token_hash', '!=', keepHash);
    await query.execute();
  }

  /** Ends every session opened with the admin token (it was rotated). */
  async deleteAdminTokenSessions(db: Executor): Promise<number> {
    const result = await db.deleteFrom('sessions').where('user_id', 'is', null).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async deleteExpired(db: Executor, now: string): Promise<void> {
    await db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
  }
}
