// Pure rules of sign-in under attack (issue 20, docs/adr/0022-sign-in-under-attack.md): whether a
// counted attempt may go ahead, whether password work may start now, and how many failed sign-ins the
// audit log takes. The I/O lives in throttle.store.ts, sign-in-throttles.ts and password-work.ts.

/** A counter right after an attempt was counted in it. */
export interface ThrottleCount {
  /** Attempts in the window, this one included. */
  hits: number;
  /** ISO-8601 UTC end of the window. */
  windowEndsAt: string;
}

/**
 * Seconds the client must wait when the attempt just counted went over `limit` (it must not go ahead), 0
 * when it is within the limit. Never less than 1 second while refused, so Retry-After never says 0.
 */
export function retryAfterOf(count: ThrottleCount, limit: number, now: number): number {
  if (count.hits <= limit) return 0;
  return Math.max(1, Math.ceil((Date.parse(count.windowEndsAt) - now) / 1000));
}

/** The counter of an account (a normalized e-mail address, known or not), of a client key, and of a client key's single sign-on starts. */
export const throttleKey = {
  account: (email: string) => `account:${email}`,
  address: (client: string) => `address:${client}`,
  ssoStart: (client: string) => `sso-start:${client}`,
} as const;

/** How much scrypt work one process runs at once (it runs on libuv's thread pool, 4 threads by default). */
export interface PasswordWorkLimits {
  /** Password checks and hashes running at once. */
  concurrency: number;
  /** Checks waiting for a free slot; beyond, 503. */
  queue: number;
  /** Checks running or waiting for one client key; beyond, 429. */
  perClient: number;
}

export interface PasswordWorkLoad {
  running: number;
  waiting: number;
  /** Checks of this request's client key running or waiting. */
  ofClient: number;
}

/** `run` now, `wait` for a slot, or refuse: `client-busy` (429) before `server-busy` (503). */
export type PasswordWorkAdmission = 'run' | 'wait' | 'client-busy' | 'server-busy';

export function passwordWorkAdmission(load: PasswordWorkLoad, limits: PasswordWorkLimits): PasswordWorkAdmission {
  if (load.ofClient >= limits.perClient) return 'client-busy';
  if (load.running < limits.concurrency) return 'run';
  if (load.waiting < limits.queue) return 'wait';
  return 'server-busy';
}

/** Failed sign-ins written to the audit log per minute and instance at most; the rest are counted. */
export interface AuditBudgetState {
  /** Start of the current minute, ms. */
  since: number;
  /** Entries written in it. */
  written: number;
  /** Failures not written since the last written entry. */
  skipped: number;
}

/**
 * Whether one more failed sign-in is written. Failures are throttled per account and address already;
 * this bounds what many addresses together can make the log write. A written entry carries the number
 * of failures skipped before it, so none goes unnoticed.
 */
export function auditBudget(state: AuditBudgetState, perMinute: number, now: number): { write: boolean; skipped: number; next: AuditBudgetState } {
  const fresh = now - state.since >= 60_000 ? { since: now, written: 0, skipped: state.skipped } : state;
  if (fresh.written < perMinute) return { write: true, skipped: fresh.skipped, next: { since: fresh.since, written: fresh.written + 1, skipped: 0 } };
  return { write: false, skipped: fresh.skipped + 1, next: { ...fresh, skipped: fresh.skipped + 1 } };
}
