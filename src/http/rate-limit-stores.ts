import { isIPv4, isIPv6 } from 'node:net';
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

/**
 * The counter key of a client address: IPv4 as it is, an IPv4-mapped IPv6 address as its IPv4, any other
 * IPv6 address as its /64 (one host usually owns a whole /64, so counting per address would let it pick
 * a fresh one for every request).
 */
export function clientKey(ip: string): string {
  const address = ip.replace(/%.*$/, '');
  if (isIPv4(address) || !isIPv6(address)) return address;
  const groups = expandIPv6(address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (with `::` and a trailing dotted IPv4 expanded). */
function expandIPv6(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const middle = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((g) => parseInt(g, 16));
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
