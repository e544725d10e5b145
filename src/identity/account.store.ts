import { type Selectable, sql } from 'kysely';
import { isUniqueViolation } from '../db/codec.ts';
import type { Dialect, Executor } from '../db/database.ts';
import { AppError, messages } from '../errors.ts';
import type { AccessToken, Invitation, User } from './account.ts';
import type { Role } from './actor.ts';
import type { AccessTokensTable, InvitationsTable, UsersTable } from './account.table.ts';

const toUser = (r: Selectable<UsersTable>): User => ({ id: r.id, email: r.email, role: r.role as Role, createdAt: r.created_at, updatedAt: r.updated_at });
const toInvitation = (r: Selectable<InvitationsTable>): Invitation => ({
  id: r.id,
  email: r.email,
  role: r.role as Role,
  invitedBy: r.invited_by,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  acceptedAt: r.accepted_at,
});
const toToken = (r: Selectable<AccessTokensTable>): AccessToken => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  tokenPrefix: r.token_prefix,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  expiresAt: r.expires_at,
});

/** Any fixed number: the advisory lock of member changes, the same on every instance. */
const MEMBERS_LOCK = 0x464c504d; // "FLPM"

export class AccountStore {
  constructor(private readonly dialect: Dialect) {}

  /**
   * Serializes changes of roles and members for the rest of the transaction, so that two owners demoted
   * or removed at once cannot both see the other as the remaining owner. SQLite already runs one write
   * transaction at a time; PostgreSQL (read committed) needs the lock.
   */
  async lockMembers(trx: Executor): Promise<void> {
    if (this.dialect === 'postgres') await sql`select pg_advisory_xact_lock(${MEMBERS_LOCK})`.execute(trx);
  }
  /** Inserts a user; an address taken meanwhile (a concurrent invitation or creation) is a 409, not a 500. */
  async insertUser(db: Executor, user: User, passwordHash: string): Promise<void> {
    try {
      await db
        .insertInto('users')
        .values({ id: user.id, email: user.email, password_hash: passwordHash, role: user.role, created_at: user.createdAt, updated_at: user.updatedAt })
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', messages.userExists);
      throw error;
    }
  }

  async findUser(db: Executor, id: string): Promise<User | undefined> {
    const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toUser(row);
  }

  async findUserByEmail(db: Executor, email: string): Promise<(User & { passwordHash: string }) | undefined> {
    const row = await db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
    return row && { ...toUser(row), passwordHash: row.password_hash };
  }

  async passwordHashOf(db: Executor, id: string): Promise<string | undefined> {
    return (await db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirst())?.password_hash;
  }

  async listUsers(db: Executor): Promise<User[]> {
    return (await db.selectFrom('users').selectAll().orderBy('created_at').orderBy('id').execute()).map(toUser);
  }

  async countUsers(db: Executor): Promise<number> {
    const row = await db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async countOwners(db: Executor): Promise<number> {
    const row = await db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('role', '=', 'owner')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async updateRole(db: Executor, id: string, role: Role, now: string): Promise<void> {
    await db.updateTable('users').set({ role, updated_at: now }).where('id', '=', id).execute();
  }

  async updatePassword(db: Executor, id: string, passwordHash: string, now: string): Promise<void> {
    await db.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', id).execute();
  }

  /** Deletes a user; their sessions and access tokens go with them (foreign keys cascade). */
  async deleteUser(db: Executor, id: string): Promise<boolean> {
    const result = await db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async insertInvitation(db: Executor, invitation: Invitation, tokenHash: string): Promise<void> {
    await db
      .insertInto('invitations')
      .values({
        id: invitation.id,
        email: invitation.email,
        role: invitation.role,
        token_hash: tokenHash,
        invited_by: invitation.invitedBy,
        created_at: invitation.createdAt,
        expires_at: invitation.expiresAt,
        accepted_at: null,
      })
      .execute();
  }

  /** Open invitations: neither accepted nor expired at `now`. */
  async listOpenInvitations(db: Executor, now: string): Promise<Invitation[]> {
    const rows = await db
      .selectFrom('invitations')
      .selectAll()
      .where('accepted_at', 'is', null)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map(toInvitation);
  }

  async findOpenInvitationByHash(db: Executor, tokenHash: string, now: string): Promise<Invitation | undefined> {
    const row = await db
      .selectFrom('invitations')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .where('accepted_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row && toInvitation(row);
  }

  /** Marks an invitation used; false when another request used it first. */
  async acceptInvitation(db: Executor, id: string, now: string): Promise<boolean> {
    const result = await db.updateTable('invitations').set({ accepted_at: now }).where('id', '=', id).where('accepted_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async deleteInvitation(db: Executor, id: string): Promise<Invitation | undefined> {
    const row = await db.deleteFrom('invitations').where('id', '=', id).where('accepted_at', 'is', null).returningAll().executeTakeFirst();
    return row && toInvitation(row);
  }

  /** Open invitations made by a member who is no longer an owner (removed or demoted) go with that role. */
  async deleteOpenInvitationsBy(db: Executor, userId: string): Promise<void> {
    await db.deleteFrom('invitations').where('invited_by', '=', userId).where('accepted_at', 'is', null).execute();
  }

  /** Open invitations of an address are replaced by a new one. */
  async deleteOpenInvitationsOf(db: Executor, email: string): Promise<void> {
    await db.deleteFrom('invitations').where('email', '=', email).where('accepted_at', 'is', null).execute();
  }

  async insertAccessToken(db: Executor, token: AccessToken, tokenHash: string): Promise<void> {
    await db
      .insertInto('access_tokens')
      .values({
        id: token.id,
        user_id: token.userId,
        name: token.name,
        token_hash: tokenHash,
        token_prefix: token.tokenPrefix,
        created_at: token.createdAt,
        last_used_at: null,
        expires_at: token.expiresAt,
      })
      .execute();
  }

  async listAccessTokens(db: Executor, userId: string): Promise<AccessToken[]> {
    const rows = await db.selectFrom('access_tokens').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').execute();
    return rows.map(toToken);
  }

  async findAccessTokenByHash(db: Executor, tokenHash: string): Promise<AccessToken | undefined> {
    const row = await db.selectFrom('access_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return row && toToken(row);
  }

  async touchAccessToken(db: Executor, id: string, now: string): Promise<void> {
    await db.updateTable('access_tokens').set({ last_used_at: now }).where('id', '=', id).execute();
  }

  /** Ends every access token of a user (their password changed); answers how many. */
  async deleteAccessTokensOf(db: Executor, userId: string): Promise<number> {
    const result = await db.deleteFrom('access_tokens').where('user_id', '=', userId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async deleteAccessToken(db: Executor, userId: string, id: string): Promise<AccessToken | undefined> {
    const row = await db.deleteFrom('access_tokens').where('user_id', '=', userId).where('id', '=', id).returningAll().executeTakeFirst();
    return row && toToken(row);
  }
}
