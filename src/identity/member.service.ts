import { newId, nowIso } from '../db/codec.ts';
import { AppError, message, messages } from '../errors.ts';
import { normalizeEmail, type User } from './account.ts';
import type { AccountServiceDeps } from './account.deps.ts';
import type { Actor, Principal, Role } from './actor.ts';
import { unchanged } from './audit-trail.ts';
import { hashPassword } from './password.ts';

const VIEWERS_SEE_SUBMISSIONS = 'viewers_see_submissions';

/**
 * Members (issue 13, docs/adr/0021-accounts-and-roles.md): made directly by the admin token, their roles
 * (never leaving no owner) and passwords, who a session acts as, and the members settings. Every write
 * is audited in its transaction.
 */
export class MemberService {
  constructor(private readonly deps: Pick<AccountServiceDeps, 'db' | 'store' | 'settings' | 'audit' | 'clock' | 'scryptCost'>) {}

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

  /** Whether an owner account exists: the sign-in page leads with the admin token until one does. */
  async ownerExists(): Promise<boolean> {
    return (await this.deps.store.countOwners(this.deps.db)) > 0;
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
        changes: { email: unchanged(user.email), role: { before: user.role, after: role } },
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
      const user = await this.deps.store.findUser(trx, userId);
      if (!user) throw new AppError('not_found', message('userNotFound', { id: userId }));
      await this.deps.store.updatePassword(trx, userId, nextHash, nowIso(this.deps.clock));
      const revoked = await this.deps.store.deleteAccessTokensOf(trx, userId);
      // The log says that the password changed, never a hash of it.
      await this.deps.audit.record(trx, actor, {
        entity: 'member',
        entityId: userId,
        action: 'member.password_changed',
        changes: { email: unchanged(user.email), ...(revoked > 0 ? { accessTokensRevoked: { after: revoked } } : {}) },
      });
    });
  }

  /** Who a session acts as: its user with their current role (a removed user's sessions are gone). */
  async principalOfUser(userId: string): Promise<Principal | undefined> {
    const user = await this.deps.store.findUser(this.deps.db, userId);
    return user && { actor: { type: 'user', id: user.id, label: user.email }, role: user.role, member: { id: user.id, email: user.email } };
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
