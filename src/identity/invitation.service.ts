import { newId, newKey, nowIso } from '../db/codec.ts';
import { AppError, message, messages } from '../errors.ts';
import { type Invitation, normalizeEmail, type User } from './account.ts';
import type { AccountServiceDeps } from './account.deps.ts';
import type { Actor, Role } from './actor.ts';
import { hashPassword } from './password.ts';
import { hashToken } from './token-hash.ts';

const INVITATION_PREFIX = 'fpi_';

/** Invitation links (issue 13, docs/adr/0021-accounts-and-roles.md): made by owners, accepted once, audited. */
export class InvitationService {
  constructor(private readonly deps: Pick<AccountServiceDeps, 'db' | 'store' | 'audit' | 'clock' | 'invitationTtlMs' | 'scryptCost'>) {}

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
}
