import type { Redis } from 'ioredis';

// The counters behind contract D20's per-client limits, written against @fastify/rate-limit's documented
// custom-store contract (`incr(key, cb, timeWindow, max)` and `child(routeOptions)`): fixed windows, in
// memory or in Redis. Flagpost's own, so that nothing reaches into the plugin's private files.

export interface RateLimitState {
  /** Requests counted in the current window, this one included. */
  current: number;
  /** Milliseconds until the window ends. */
  ttl: number;
}

export interface RateLimitStore {
  incr(key: string, cb: (err: Error | null, state: RateLimitState) => void, timeWindow: number, max: number): void;
  child(routeOptions: unknown): RateLimitStore;
}

/** Fixed windows in memory, for one instance; at most `capacity` clients, the oldest forgotten first. */
export class MemoryStore implements RateLimitStore {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();

  constructor(
    private readonly capacity: number,
    private readonly now: () => number = Date.now,
  ) {}

  incr(key: string, cb: (err: Error | null, state: RateLimitState) => void, timeWindow: number, _max?: number): void {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      if (window) this.windows.delete(key);
      else if (this.windows.size >= this.capacity) this.windows.delete(this.windows.keys().next().value!);
      window = { count: 0, endsAt: now + timeWindow };
      this.windows.set(key, window);
    }
    window.count++;
    cb(null, { current: window.count, ttl: window.endsAt - now });
  }

  /** Every route shares the one counter of a client (one budget per client, contract D20). */
  child(_routeOptions?: unknown): RateLimitStore {
    return this;
  }
}

/** INCR with the window's expiry set by the first request of the window, in one round trip. */
const INCR_SCRIPT = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return { current, ttl }
`;

/** Fixed windows in Redis, shared by every instance of the deployment. */
export class RedisStore implements RateLimitStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  incr(key: string, cb: (err: Error | null, state: RateLimitState) => void, timeWindow: number, _max?: number): void {
    this.redis.eval(INCR_SCRIPT, 1, this.prefix + key, timeWindow).then(
      (result) => {
        const [current, ttl] = result as [number, number];
        cb(null, { current: Number(current), ttl: Number(ttl) });
      },
      (error: Error) => cb(error, { current: 0, ttl: 0 }),
    );
  }

  /** Every route shares the one counter of a client (one budget per client, contract D20). */
  child(_routeOptions?: unknown): RateLimitStore {
    return this;
  }
}

/** Counters kept by another process for several (the cluster's primary for its workers): `[current, ttl]` per key. */
export interface BatchCounter {
  count(keys: string[], windowMs: number): Promise<Array<[number, number]>>;
}

/**
 * Fixed windows kept by the primary of FLAGPOST_WORKERS > 1, so that every worker of the instance counts
 * against one budget per client (docs/adr/0029-workers.md). The requests of one turn of the event loop go
 * to the primary as one message; a primary that does not answer lets them through uncounted (skipOnError).
 */
export class BatchedStore implements RateLimitStore {
  private batch: Array<{ key: string; cb: (err: Error | null, state: RateLimitState) => void }> = [];

  constructor(private readonly counter: BatchCounter) {}

  incr(key: string, cb: (err: Error | null, state: RateLimitState) => void, timeWindow: number, _max?: number): void {
    if (this.batch.length === 0) setImmediate(() => this.flush(timeWindow));
    this.batch.push({ key, cb });
  }

  /** Every route shares the one counter of a client (one budget per client, contract D20). */
  child(_routeOptions?: unknown): RateLimitStore {
    return this;
  }

  private flush(windowMs: number): void {
    const batch = this.batch;
    this.batch = [];
    this.counter
      .count(
        batch.map((entry) => entry.key),
        windowMs,
      )
      .then(
        (states) => {
          batch.forEach((entry, i) => {
            const [current, ttl] = states[i] ?? [0, 0];
            entry.cb(null, { current, ttl });
          });
        },
        (error: Error) => {
          for (const entry of batch) entry.cb(error, { current: 0, ttl: 0 });
        },
      );
  }
}
