import type { Db } from '../db/database.ts';
import { retryAfterOf, throttleKey } from './throttle.ts';
import type { ThrottleStore } from './throttle.store.ts';

/** One counted attempt; `retryAfter` > 0 when it went over the limit and must not go ahead. */
export interface Attempt {
  retryAfter: number;
  /** Gives the attempt back (it succeeded); nothing for a refused one. */
  refund(): Promise<void>;
}

export interface ThrottleLimit {
  /** Attempts allowed within the window; the next ones are refused until it ends. */
  limit: number;
  windowMs: number;
}

export interface SignInThrottlesDeps {
  db: Db;
  store: ThrottleStore;
  clock: () => Date;
  /** Wrong passwords per account (e-mail address, known or not). */
  account: ThrottleLimit;
  /** Failed credentials per client key: wrong passwords, invitation tokens, admin tokens, sessions. */
  address: ThrottleLimit;
}

/**
 * Sign-in throttling shared by every instance (docs/adr/0022-sign-in-under-attack.md): an attempt is
 * counted before the password work it guards and refunded when it succeeds, so that the limits hold
 * under any concurrency. Counts live in the database, which every instance shares.
 */
export class SignInThrottles {
  constructor(private readonly deps: SignInThrottlesDeps) {}

  /** Counts one password attempt for an account; refused (retryAfter > 0) past the account's limit. */
  reserveAccount(email: string): Promise<Attempt> {
    return this.reserve(throttleKey.account(email), this.deps.account);
  }

  /** Counts one failed or guarded credential of a client key (http/client-key.ts: IPv6 per /64). */
  reserveAddress(client: string): Promise<Attempt> {
    return this.reserve(throttleKey.address(client), this.deps.address);
  }

  /** Counts one single sign-on start of a client key (each writes a sign-in under way); refused past `limit`. */
  reserveSsoStart(client: string, limit: ThrottleLimit): Promise<Attempt> {
    return this.reserve(throttleKey.ssoStart(client), limit);
  }

  /** Forgets a client key's failures (the admin token was presented). */
  async clearAddress(client: string): Promise<void> {
    await this.deps.store.clear(this.deps.db, throttleKey.address(client));
  }

  /** Deletes counters whose window has ended (the retention job). */
  async prune(): Promise<number> {
    return this.deps.store.deleteEnded(this.deps.db, this.deps.clock().toISOString());
  }

  private async reserve(key: string, { limit, windowMs }: ThrottleLimit): Promise<Attempt> {
    const now = this.deps.clock().getTime();
    const count = await this.deps.store.hit(this.deps.db, key, new Date(now).toISOString(), new Date(now + windowMs).toISOString());
    const retryAfter = retryAfterOf(count, limit, now);
    let refunded = false;
    return {
      retryAfter,
      refund: async () => {
        // A refused attempt did no work and is not given back: it keeps the refusal going.
        if (refunded || retryAfter > 0) return;
        refunded = true;
        await this.deps.store.refund(this.deps.db, key, count.windowEndsAt);
      },
    };
  }
}
