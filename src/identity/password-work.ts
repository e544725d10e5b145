import { AppError, messages } from '../errors.ts';
import { type PasswordWorkLimits, passwordWorkAdmission } from './throttle.ts';

/** Seconds a refused client is told to wait: a password check takes a fraction of one. */
const RETRY_AFTER_SECONDS = 1;

/**
 * Bounds the scrypt work of this process (docs/adr/0022-sign-in-under-attack.md). scrypt runs on libuv's
 * thread pool, which file reads and DNS share: unbounded, 120 sign-ins from one address filled it and
 * everyone else waited. A few checks run at once, a bounded queue waits, one client key may have only
 * a few running or waiting; the rest are refused at once: 429 for the client over its share, 503 when
 * the queue is full, both with Retry-After.
 */
export class PasswordWork {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly ofClient = new Map<string, number>();

  constructor(private readonly limits: PasswordWorkLimits) {}

  /** Runs `work` (which checks or hashes a password) for `client`, a client key, once admitted. */
  async run<T>(client: string, work: () => Promise<T>): Promise<T> {
    const load = { running: this.running, waiting: this.waiting.length, ofClient: this.ofClient.get(client) ?? 0 };
    const admission = passwordWorkAdmission(load, this.limits);
    if (admission === 'client-busy') throw new AppError('rate_limited', messages.tooManyRequests, { retryAfterSeconds: RETRY_AFTER_SECONDS });
    if (admission === 'server-busy') throw new AppError('unavailable', messages.serviceUnavailable, { retryAfterSeconds: RETRY_AFTER_SECONDS });
    this.ofClient.set(client, load.ofClient + 1);
    try {
      if (admission === 'wait') await new Promise<void>((resolve) => this.waiting.push(resolve));
      else this.running++;
      try {
        return await work();
      } finally {
        const next = this.waiting.shift();
        // The slot passes straight to the next in line.
        if (next) next();
        else this.running--;
      }
    } finally {
      const left = (this.ofClient.get(client) ?? 1) - 1;
      if (left <= 0) this.ofClient.delete(client);
      else this.ofClient.set(client, left);
    }
  }

  /** Checks running and waiting now (tests). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
