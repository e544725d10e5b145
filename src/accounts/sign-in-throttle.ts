/**
 * Sign-in throttling per account (issue 13): after `maxFailures` wrong passwords for one e-mail address
 * within the window, that address is refused for the rest of the window, whatever the client address.
 * Unknown addresses are counted exactly like known ones, so the 429 tells nothing about which exist.
 * Per instance, like the per-address lockout of the admin gate (docs/adr/0021-accounts-and-roles.md).
 */
export class SignInThrottle {
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxTracked = 10_000,
  ) {}

  /** Seconds until the address may try again, or 0 when it may now. */
  retryAfter(email: string): number {
    const entry = this.failures.get(email);
    if (!entry) return 0;
    const elapsed = this.now() - entry.since;
    if (elapsed >= this.windowMs) {
      this.failures.delete(email);
      return 0;
    }
    return entry.count >= this.maxFailures ? Math.ceil((this.windowMs - elapsed) / 1000) : 0;
  }

  failed(email: string): void {
    const entry = this.failures.get(email);
    if (entry) entry.count++;
    else {
      if (this.failures.size >= this.maxTracked) this.failures.delete(this.failures.keys().next().value!);
      this.failures.set(email, { count: 1, since: this.now() });
    }
  }

  succeeded(email: string): void {
    this.failures.delete(email);
  }
}
