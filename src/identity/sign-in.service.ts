import type { Db } from '../db/database.ts';
import { AppError, messages } from '../errors.ts';
import { normalizeEmail, type User } from './account.ts';
import type { AccountStore } from './account.store.ts';
import type { Actor } from './actor.ts';
import type { AuditTrail } from './audit-trail.ts';
import { noUserHash, type ScryptCost, verifyPassword } from './password.ts';
import type { SignInMethod } from './session.ts';
import type { SignInThrottles } from './sign-in-throttles.ts';
import { type AuditBudgetState, auditBudget } from './throttle.ts';

export interface SignInServiceDeps {
  db: Db;
  store: AccountStore;
  throttles: SignInThrottles;
  audit: AuditTrail;
  clock: () => Date;
  /** Failed sign-ins written to the audit log per minute and instance at most (the rest are counted). */
  failedPerMinute: number;
  /** The cost of the hash an unknown address is checked against: that of new passwords, so both take as long. */
  scryptCost?: ScryptCost;
  /** FLAGPOST_SSO_ONLY: passwords are off except for this break-glass owner's address (normalized); undefined: on. */
  passwordsOff?: { breakGlassEmail: string | undefined };
}

/**
 * Password checks under the per-account throttle, and the audit entries of sign-ins (issue 20,
 * docs/adr/0022-sign-in-under-attack.md). Each check counts its attempt before the scrypt work and gives
 * it back when the password was right, so that no number of concurrent guesses evaluates more than the
 * limit. The per-address count and the bound on concurrent work are the callers' (the admin gate and
 * PasswordWork), which know the request.
 */
export class SignInService {
  private budget: AuditBudgetState = { since: 0, written: 0, skipped: 0 };

  constructor(private readonly deps: SignInServiceDeps) {}

  /**
   * The user of an e-mail and password. 429 once the address has had its wrong passwords for the window
   * (known or not: the answer tells nothing about which addresses have accounts, and an unknown address
   * costs the same scrypt work); 401 for a wrong address or password. Both outcomes are audited with
   * the client key `client`.
   */
  async signIn(email: string, password: string, client: string): Promise<User> {
    const address = normalizeEmail(email);
    if (!this.passwordAllowed(address)) throw new AppError('forbidden', messages.passwordsOff);
    const attempt = await this.deps.throttles.reserveAccount(address);
    if (attempt.retryAfter > 0) throw new AppError('rate_limited', messages.tooManyRequests, { retryAfterSeconds: attempt.retryAfter });
    const found = await this.deps.store.findUserByEmail(this.deps.db, address);
    // A member of single sign-on has no password hash: checked against none, so that it takes as long.
    const hash = found?.passwordHash.startsWith('scrypt$') ? found.passwordHash : noUserHash(this.deps.scryptCost);
    const ok = (await verifyPassword(password, hash)) && hash === found?.passwordHash;
    if (!found || !ok) {
      await this.recordFailure('password', address.slice(0, 320), client);
      throw new AppError('unauthorized', messages.invalidCredentials);
    }
    await attempt.refund();
    const { passwordHash: _hash, ...user } = found;
    await this.recordSuccess({ type: 'user', id: user.id, label: user.email }, 'password', user.id, client);
    return user;
  }

  /**
   * Confirms a signed-in member's password before a sensitive change (a new password, a new access
   * token), under the same per-account throttle as sign-in: a stolen session cannot guess it freely.
   * A wrong password is a 400 naming `field`.
   */
  async confirmPassword(member: { id: string; email: string }, password: string, field: string): Promise<void> {
    const attempt = await this.deps.throttles.reserveAccount(member.email);
    if (attempt.retryAfter > 0) throw new AppError('rate_limited', messages.tooManyRequests, { retryAfterSeconds: attempt.retryAfter });
    const hash = await this.deps.store.passwordHashOf(this.deps.db, member.id);
    if (!hash || !(await verifyPassword(password, hash))) throw AppError.validation([{ field, reason: 'is not your current password' }]);
    await attempt.refund();
  }

  /** Whether a password may sign in (or join by invitation) as `email`: off under FLAGPOST_SSO_ONLY but for the break-glass owner. */
  passwordAllowed(email: string | undefined): boolean {
    const off = this.deps.passwordsOff;
    return !off || (email !== undefined && off.breakGlassEmail !== undefined && normalizeEmail(email) === off.breakGlassEmail);
  }

  /** Audits a sign-in with the admin token, right or wrong. */
  async recordAdminTokenSignIn(succeeded: boolean, client: string): Promise<void> {
    if (succeeded) await this.recordSuccess({ type: 'admin_token', id: null, label: 'admin token' }, 'admin_token', 'admin_token', client);
    else await this.recordFailure('admin_token', 'admin_token', client);
  }

  private async recordSuccess(actor: Actor, method: SignInMethod, entityId: string, client: string): Promise<void> {
    await this.deps.audit.record(this.deps.db, actor, {
      entity: 'sign_in',
      entityId,
      action: 'sign_in.succeeded',
      changes: { method: { after: method }, address: { after: client } },
    });
  }

  /** Never the password: the address tried (or "admin_token") and the client key. */
  private async recordFailure(method: SignInMethod, entityId: string, client: string): Promise<void> {
    const { write, skipped, next } = auditBudget(this.budget, this.deps.failedPerMinute, this.deps.clock().getTime());
    this.budget = next;
    if (!write) return;
    await this.deps.audit.record(
      this.deps.db,
      { type: 'anonymous', id: null, label: client },
      {
        entity: 'sign_in',
        entityId,
        action: 'sign_in.failed',
        changes: { method: { after: method }, address: { after: client }, ...(skipped > 0 ? { unrecordedBefore: { after: skipped } } : {}) },
      },
    );
  }
}
