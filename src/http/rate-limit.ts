import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { loadIoredis } from '../optional-packages.ts';
import type { Config } from '../config.ts';
import { AppError, messages } from '../errors.ts';
import { type Surface, surfaceOf } from './error-handler.ts';
import { clientKey } from './client-key.ts';
import { type BatchCounter, BatchedStore, MemoryStore, type RateLimitState, type RateLimitStore, RedisStore } from './rate-limit-stores.ts';

export type { RateLimitState } from './rate-limit-stores.ts';

// Contract D20: per client IP limits on the public interfaces, 429 JSON with Retry-After and the
// RateLimit-* headers of the IETF draft, counted in memory or, with REDIS_URL, in Redis so that every
// instance shares one count. One counter serves @fastify/rate-limit (every Fastify route) and the flag
// read fast path (src/evaluation/flag.fast-path.ts), so a client has one budget however its request is answered.
// The workers of FLAGPOST_WORKERS > 1 without Redis count in their primary (BatchedStore).

/** Surfaces that count against the limit; admin, the health probes (/healthz, /livez, /readyz) and unknown routes never do. */
export const LIMITED_SURFACES: ReadonlySet<Surface> = new Set<Surface>(['flags', 'flags-preview', 'ofrep', 'track', 'forms']);

const REDIS_PREFIX = 'flagpost:ratelimit:';

/** The shared per-IP counter with the limits of the configuration. */
export class RateLimiter {
  constructor(
    readonly max: number,
    readonly windowMs: number,
    readonly store: RateLimitStore,
    private readonly redis: Redis | undefined,
  ) {}

  /** The counter key of a client address (IPv4 as is, IPv6 per /64, mapped IPv4 as IPv4). */
  keyOf(ip: string): string {
    return clientKey(ip);
  }

  /** Counts one request of `key`; calls back with the new state (synchronously in memory). */
  hit(key: string, cb: (err: Error | null, state: RateLimitState) => void): void {
    this.store.incr(key, cb, this.windowMs, this.max);
  }

  /** Appends the RateLimit-* headers of an allowed request, as the plugin writes them (enableDraftSpec). */
  appendHeaders(headers: string[], state: RateLimitState): void {
    headers.push(
      'ratelimit-limit',
      String(this.max),
      'ratelimit-remaining',
      String(Math.max(0, this.max - state.current)),
      'ratelimit-reset',
      String(Math.ceil(state.ttl / 1000)),
    );
  }

  async close(): Promise<void> {
    if (this.redis) await this.redis.quit().catch(() => this.redis!.disconnect());
  }
}

export interface RateLimitLog {
  warn(obj: object, msg: string): void;
}

/**
 * The per-IP counter of the configuration (memory, the primary's counters for the workers of
 * FLAGPOST_WORKERS > 1, or Redis with REDIS_URL), or undefined when FLAGPOST_RATE_LIMIT_MAX is 0 (limits
 * off). One counter serves the Fastify routes and the flag read fast path, so a client has one budget
 * however its request is answered.
 */
export async function createRateLimiter(
  config: Pick<Config, 'rateLimit' | 'redisUrl'>,
  log?: RateLimitLog,
  primary?: BatchCounter,
): Promise<RateLimiter | undefined> {
  const { max, windowMs } = config.rateLimit;
  if (max === 0) return undefined;
  if (!config.redisUrl && primary) return new RateLimiter(max, windowMs, new BatchedStore(primary), undefined);
  if (!config.redisUrl) {
    // Enough entries for the clients of one window on a busy instance; the oldest are dropped first.
    return new RateLimiter(max, windowMs, new MemoryStore(50_000), undefined);
  }
  // No offline queue and a short command timeout: while Redis is away requests are answered
  // without counting (skipOnError) instead of waiting for it.
  const redis = new (loadIoredis().Redis)(config.redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1000 });
  redis.on('error', (error: Error) => log?.warn({ err: error }, 'rate limit store (Redis) error'));
  await redis.connect().catch((error: Error) => log?.warn({ err: error }, 'Redis is not reachable; rate limits are not counted until it is'));
  return new RateLimiter(max, windowMs, new RedisStore(redis, REDIS_PREFIX), redis);
}

/**
 * Registers @fastify/rate-limit with the limiter's counter for every route registered after it (call
 * before the routes); nothing when limits are off. Which routes count is decided per request from
 * `config.surface`, so route plugins such as the form interface are limited without knowing about it.
 */
export async function registerRateLimit(app: FastifyInstance, limiter: RateLimiter | undefined): Promise<void> {
  if (!limiter) return;
  const store = limiter.store;
  await app.register(rateLimit, {
    global: true,
    max: limiter.max,
    timeWindow: limiter.windowMs,
    enableDraftSpec: true,
    skipOnError: true,
    // The same key as the fast path's, so that a client has one budget however it is answered.
    keyGenerator: (request: FastifyRequest) => limiter.keyOf(request.ip),
    // A constructor that returns an object makes `new` yield that object: the plugin uses our store.
    store: function sharedStore() {
      return store;
    } as unknown as never,
    allowList: (request: FastifyRequest) => !LIMITED_SURFACES.has(surfaceOf(request)),
    errorResponseBuilder: () => new AppError('rate_limited', messages.tooManyRequests),
  });
  app.addHook('onClose', async () => limiter.close());
}
