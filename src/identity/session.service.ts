import { newId, newKey } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import type { Session, SignInMethod } from './session.ts';
import type { SessionStore } from './session.store.ts';
import { hashToken } from './token-hash.ts';

export interface SessionServiceDeps {
  db: Db;
  store: SessionStore;
  clock: () => Date;
  /** How long a session lasts from sign-in. */
  ttlMs: number;
}

/**
 * Dashboard sessions (issue 9): opened once the admin token was checked, found by the token of the
 * session cookie, closed by signing out. Tokens are 256 random bits; only their hash is stored.
 */
export class SessionService {
  constructor(private readonly deps: SessionServiceDeps) {}

  /** Opens a session for a user (signed in by `method`, a password by default), or for the admin token of `generation`. */
  async open(opener: { userId: string; method?: SignInMethod } | { adminTokenGeneration: string }): Promise<{ session: Session; token: string }> {
    const { db, store, clock, ttlMs } = this.deps;
    const now = clock();
    // Expired sessions go when a new one comes: the table stays as small as the live sessions.
    await store.deleteExpired(db, now.toISOString());
    const token = `fps_${newKey(32)}`;
    const session: Session = {
      id: newId(),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
      userId: 'userId' in opener ? opener.userId : null,
      adminTokenGeneration: 'adminTokenGeneration' in opener ? opener.adminTokenGeneration : null,
      signInMethod: 'adminTokenGeneration' in opener ? 'admin_token' : (opener.method ?? 'password'),
    };
    await store.insert(db, session, hashToken(token));
    return { session, token };
  }

  /** The live session of a cookie's token, if any. */
  async find(token: string): Promise<Session | undefined> {
    if (token.length > 200) return undefined;
    return this.deps.store.findLive(this.deps.db, hashToken(token), this.deps.clock().toISOString());
  }

  /** Ends the other sessions of a user, keeping the one of `keepToken`. */
  async closeOthers(userId: string, keepToken?: string): Promise<void> {
    await this.deps.store.deleteOfUser(this.deps.db, userId, keepToken ? hashToken(keepToken) : undefined);
  }

  /** Ends every session opened with the admin token (`flagpost reset-admin-token`); answers how many. */
  async closeAdminTokenSessions(): Promise<number> {
    return this.deps.store.deleteAdminTokenSessions(this.deps.db);
  }

  /** Ends the session of a cookie's token; answers it, if it was live. */
  async close(token: string): Promise<Session | undefined> {
    const session = await this.find(token);
    await this.deps.store.deleteByHash(this.deps.db, hashToken(token));
    return session;
  }
}
