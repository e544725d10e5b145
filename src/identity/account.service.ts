import type { SettingsStore } from '../admin/index.ts';
import { newId, newKey, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, message, messages } from '../errors.ts';
import { type AccessToken, type Invitation, normalizeEmail, type User } from './account.ts';
import type { Actor, Principal, Role } from './actor.ts';
import type { AuditTrail } from './audit-trail.ts';
import { hashToken } from './token-hash.ts';
import type { AccountStore } from './account.store.ts';
import { hashPassword, type ScryptCost } from './password.ts';

export const ACCESS_TOKEN_PREFIX = 'fpt_';
/** Personal access tokens live 90 days unless their creator chooses otherwise, a year at most. */
export const ACCESS_TOKEN_DEFAULT_DAYS = 90;
export const ACCESS_TOKEN_MAX_DAYS = 365;
const INVITATION_PREFIX = 'fpi_';

export interface AccountServiceDeps {
  db: Db;
  store: AccountStore;
  settings: SettingsStore;
  audit: AuditTrail;
  clock: () => Date;
  /** How long an invitation link stays valid. */
  invitationTtlMs: number;
  /** scrypt's cost for new password hashes (password.ts's default unless a test makes it cheap). */
  scryptCost?: ScryptCost;
}

const VIEWERS_SEE_SUBMISSIONS = 'viewers_see_submissions';

/**
 * Users, invitations, personal access tokens and the account settings (issue 13,
 * docs/adr/0021-accounts-and-roles.md). Every write is audited in its transaction.
 */
export class AccountService {
  constructor(private readonly deps: AccountServiceDeps) {}

  /** Creates a user directly: the admin token's way to make the first owner (dashboard or CLI). */
  async createUser(input: { email: string; password: string; role: Role }, actor: Actor): Promise<User> {
    const email = normalizeEmail(input.email);
    const now = nowIso(this.deps.clock);
    const user: User = { id: newId(), email, role: input.role, createdAt: now, updatedAt: now };
    const hash = await hashPassword(input.password, this.deps.scryptCost);
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.lockMembers(trx);
      if (await this.deps.store.findUserByEmail(trx, email)) throw new AppError('conflict', messages.userExists);
      if (input.role !== 'owner' && (await this.deps.store.countOwners(trx)) === 0) {
        throw AppError.validation([{ field: 'body.role', reason: 'the first user must be an owner' }]);
      }
      await this.deps.store.insertUser(trx, user, hash);
      await this.deps.store.deleteOpenInvitationsOf(trx, email);
      await this.deps.audit.record(trx, actor, {
        entity: 'member',
        entityId: user.id,
        action: 'member.created',
        changes: { email: { after: email }, role: { after: user.role } },
      });
    });
    return user;
  }

  async listUsers(): Promise<User[]> {
    return this.deps.store.listUsers(this.deps.db);
  }

  async getUser(id: string): Promise<User> {
    const user = await this.deps.store.findUser(this.deps.db, id);
    if (!user) throw new AppError('not_found', message('userNotFound', { id }));
    return user;
  }

  async changeRole(id: string, role: Role, actor: Actor): Promise<User> {
    return this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.lockMembers(trx);
      const user = await this.deps.store.findUser(trx, id);
      if (!user) throw new AppError('not_found', message('userNotFound', { id }));
      if (user.role === role) return user;
      if (user.role === 'owner' && (await this.deps.store.countOwners(trx)) <= 1) throw new AppError('conflict', messages.lastOwner);
      const now = nowIso(this.deps.clock);
      await this.deps.store.updateRole(trx, id, role, now);
      // The links an owner made would let them back in as whatever they invited: they go with the role.
      if (user.role === 'owner') await this.deps.store.deleteOpenInvitationsBy(trx, id);
      await this.deps.audit.record(trx, actor, {
        entity: 'member',
        entityId: id,
        action: 'member.role_changed',
        changes: { role: { before: user.role, after: role } },
      });
      return { ...user, role, updatedAt: now };
    });
  }

  async removeUser(id: string, actor: Actor): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.lockMembers(trx);
      const user = await this.deps.store.findUser(trx, id);
      if (!user) throw new AppError('not_found', message('userNotFound', { id }));
      if (user.role === 'owner' && (await this.deps.store.countOwners(trx)) <= 1) throw new AppError('conflict', messages.lastOwner);
      await this.deps.store.deleteUser(trx, id);
      await this.deps.store.deleteOpenInvitationsBy(trx, id);
      await this.deps.audit.record(trx, actor, {
        entity: 'member',
        entityId: id,
        action: 'member.removed',
        changes: { email: { before: user.email }, role: { before: user.role } },
      });
    });
  }

  /**
   * Sets a new password (the caller confirmed the current one: SignInService.confirmPassword). The
   * member's personal access tokens end with the old password; the caller ends their other sessions.
   */
  async changePassword(userId: string, next: string, actor: Actor): Promise<void> {
    const nextHash = await hashPassword(next, this.deps.scryptCost);
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.updatePassword(trx, userId, nextHash, nowIso(this.deps.clock));
      const revoked = await this.deps.store.deleteAccessTokensOf(trx, userId);
      // The log says that the password changed, never a hash of it.
      await this.deps.audit.record(trx, actor, {
        entity: 'member',
        entityId: userId,
        action: 'member.password_changed',
        changes: revoked > 0 ? { accessTokensRevoked: { after: revoked } } : {},
      });
    });
  }

  /** Invites an address with a role; answers the single-use token (shown once) with the invitation. */
  async invite(input: { email: string; role: Role }, actor: Actor): Promise<{ invitation: Invitation; token: string }> {
    const email = normalizeEmail(input.email);
    const now = this.deps.clock();
    const token = `${INVITATION_PREFIX}${newKey(32)}`;
    const invitation: Invitation = {
      id: newId(),
      email,
      role: input.role,
      invitedBy: actor.id ?? actor.label,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + this.deps.invitationTtlMs).toISOString(),
      acceptedAt: null,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      // Under the members lock, with the inviter's role read inside it: an owner demoted or removed
      // meanwhile cannot leave an invitation behind (a demotion withdraws the open ones it sees).
      await this.deps.store.lockMembers(trx);
      if (actor.id !== null) {
        const inviter = await this.deps.store.findUser(trx, actor.id);
        if (inviter?.role !== 'owner') throw new AppError('forbidden', messages.roleForbidden);
      }
      if (await this.deps.store.findUserByEmail(trx, email)) throw new AppError('conflict', messages.userExists);
      await this.deps.store.deleteOpenInvitationsOf(trx, email);
      await this.deps.store.insertInvitation(trx, invitation, hashToken(token));
      await this.deps.audit.record(trx, actor, {
        entity: 'invitation',
        entityId: invitation.id,
        action: 'invitation.created',
        changes: { email: { after: email }, role: { after: input.role }, expiresAt: { after: invitation.expiresAt } },
      });
    });
    return { invitation, token };
  }

  async listInvitations(): Promise<Invitation[]> {
    return this.deps.store.listOpenInvitations(this.deps.db, nowIso(this.deps.clock));
  }

  async revokeInvitation(id: string, actor: Actor): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const gone = await this.deps.store.deleteInvitation(trx, id);
      if (!gone) throw new AppError('not_found', message('invitationNotFound', { id }));
      await this.deps.audit.record(trx, actor, {
        entity: 'invitation',
        entityId: id,
        action: 'invitation.revoked',
        changes: { email: { before: gone.email } },
      });
    });
  }

  /**
   * Accepts an invitation: creates the user with the invited role and the chosen password. An unknown,
   * used or expired token all get the same answer.
   */
  async acceptInvitation(token: string, password: string): Promise<User> {
    const invalid = () => new AppError('validation', messages.invitationInvalid);
    if (!token.startsWith(INVITATION_PREFIX) || token.length > 200) throw invalid();
    const hash = await hashPassword(password, this.deps.scryptCost);
    return this.deps.db.transaction().execute(async (trx) => {
      const now = nowIso(this.deps.clock);
      const invitation = await this.deps.store.findOpenInvitationByHash(trx, hashToken(token), now);
      if (!invitation || !(await this.deps.store.acceptInvitation(trx, invitation.id, now))) throw invalid();
      if (await this.deps.store.findUserByEmail(trx, invitation.email)) throw invalid();
      const user: User = { id: newId(), email: invitation.email, role: invitation.role, createdAt: now, updatedAt: now };
      await this.deps.store.insertUser(trx, user, hash);
      const actor: Actor = { type: 'user', id: user.id, label: user.email };
      await this.deps.audit.record(trx, actor, {
        entity: 'member',
        entityId: user.id,
        action: 'member.joined',
        changes: { email: { after: user.email }, role: { after: user.role }, invitation: { after: invitation.id } },
      });
      return user;
    });
  }

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

  /** Who a session acts as: its user with their current role (a removed user's sessions are gone). */
  async principalOfUser(userId: string): Promise<Principal | undefined> {
    const user = await this.deps.store.findUser(this.deps.db, userId);
    return user && { actor: { type: 'user', id: user.id, label: user.email }, role: user.role, member: { id: user.id, email: user.email } };
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

  async viewersSeeSubmissions(): Promise<boolean> {
    return (await this.deps.settings.find(this.deps.db, VIEWERS_SEE_SUBMISSIONS)) === 'true';
  }

  async setViewersSeeSubmissions(value: boolean, actor: Actor): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      // Read under the members lock, so that two changes at once each see the other's result.
      await this.deps.store.lockMembers(trx);
      const before = (await this.deps.settings.find(trx, VIEWERS_SEE_SUBMISSIONS)) === 'true';
      await this.deps.settings.put(trx, VIEWERS_SEE_SUBMISSIONS, String(value), nowIso(this.deps.clock));
      if (before !== value) {
        await this.deps.audit.record(trx, actor, {
          entity: 'settings',
          entityId: 'members',
          action: 'settings.updated',
          changes: { viewersSeeSubmissions: { before, after: value } },
        });
      }
    });
  }
}
