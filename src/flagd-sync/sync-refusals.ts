/**
 * Refused sync selectors per client (docs/adr/0027-flagd-sync.md): after `maxFailures` refusals within the
 * window, the client is refused for the rest of the window. Per instance and in memory: a sync token has
 * 256 random bits, so this bounds the noise of a misconfigured provider rather than guessing, and a
 * restart forgets it. At most `maxTracked` clients are remembered, the oldest forgotten first.
 */
export class SyncRefusals {
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxTracked = 10_000,
  ) {}

  /** Seconds until the client may try again, or 0 when it may now. */
  retryAfter(client: string): number {
    const entry = this.failures.get(client);
    if (!entry) return 0;
    const elapsed = this.now() - entry.since;
    if (elapsed >= this.windowMs) {
      this.failures.delete(client);
      return 0;
    }
    return entry.count >= this.maxFailures ? Math.ceil((this.windowMs - elapsed) / 1000) : 0;
  }

  failed(client: string): void {
    const entry = this.failures.get(client);
    if (entry) entry.count++;
    else {
      if (this.failures.size >= this.maxTracked) this.failures.delete(this.failures.keys().next().value!);
      this.failures.set(client, { count: 1, since: this.now() });
    }
  }
}
