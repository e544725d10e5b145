import { newId, newKey } from '../db/codec.ts';
import { AppError, message } from '../errors.ts';
import type { AccessToken, User } from './account.ts';
import type { AccountServiceDeps } from './account.deps.ts';
import type { Actor, Principal } from './actor.ts';
import { hashToken } from './token-hash.ts';

export const ACCESS_TOKEN_PREFIX = 'fpt_';
/** Personal access tokens live 90 days unless their creator chooses otherwise, a year at most. */
export const ACCESS_TOKEN_DEFAULT_DAYS = 90;
export const ACCESS_TOKEN_MAX_DAYS = 365;

/** Personal access tokens (issue 13, docs/adr/0021-accounts-and-roles.md): made, listed, revoked, and who one acts as. */
export class AccessTokenService {
  constructor(private readonly deps: Pick<AccountServiceDeps, 'db' | 'store' | 'audit' | 'clock'>) {}

  /** Creates a personal access token that expires after `expiresInDays` (ACCESS_TOKEN_MAX_DAYS at most). */
  async createAccessToken(user: User, name: string, expiresInDays: number, actor: Actor): Promise<{ accessToken: AccessToken; token: string }> {
    if (!Number.isInteger(expiresInDays) || expiresInDays < 1 || expiresInDays > ACCESS_TOKEN_MAX_DAYS) {
      throw AppError.validation([{ field: 'body.expiresInDays', reason: `must be a whole number of days from 1 to ${ACCESS_TOKEN_MAX_DAYS}` }]);
    }
    const token = `${ACCESS_TOKEN_PREFIX}${newKey(32)}`;
    const now = this.deps.clock();
    const accessToken: AccessToken = {
      id: newId(),
      userId: user.id,
      name,
      tokenPrefix: token.slice(0, ACCESS_TOKEN_PREFIX.length + 4),
      createdAt: now.toISOString(),
      lastUsedAt: null,
      expiresAt: new Date(now.getTime() + expiresInDays * 86_400_000).toISOString(),
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.insertAccessToken(trx, accessToken, hashToken(token));
      await this.deps.audit.record(trx, actor, {
        entity: 'access_token',
        entityId: accessToken.id,
        action: 'access_token.created',
        changes: { name: { after: name }, tokenPrefix: { after: accessToken.tokenPrefix }, expiresAt: { after: accessToken.expiresAt } },
      });
    });
    return { accessToken, token };
  }

  async listAccessTokens(userId: string): Promise<AccessToken[]> {
    return this.deps.store.listAccessTokens(this.deps.db, userId);
  }

  async revokeAccessToken(userId: string, id: string, actor: Actor): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const gone = await this.deps.store.deleteAccessToken(trx, userId, id);
      if (!gone) throw new AppError('not_found', message('accessTokenNotFound', { id }));
      await this.deps.audit.record(trx, actor, {
        entity: 'access_token',
        entityId: id,
        action: 'access_token.revoked',
        changes: { name: { before: gone.name } },
      });
    });
  }

  /** Who a personal access token acts as; undefined for an unknown, revoked or expired token. */
  async principalOfAccessToken(token: string): Promise<Principal | undefined> {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX) || token.length > 200) return undefined;
    const found = await this.deps.store.findAccessTokenByHash(this.deps.db, hashToken(token));
    const now = this.deps.clock();
    if (!found || found.expiresAt === null || found.expiresAt <= now.toISOString()) return undefined;
    const user = await this.deps.store.findUser(this.deps.db, found.userId);
    if (!user) return undefined;
    // last_used_at at most once a minute: a busy automation must not write on every request.
    if (!found.lastUsedAt || now.getTime() - Date.parse(found.lastUsedAt) > 60_000)
      await this.deps.store.touchAccessToken(this.deps.db, found.id, now.toISOString());
    return {
      actor: { type: 'access_token', id: user.id, label: `${user.email} (token ${found.name})` },
      role: user.role,
      member: { id: user.id, email: user.email },
    };
  }
}
