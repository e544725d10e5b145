// What the process does while its database is away (issue 8): requests that need the database answer
// 503 with Retry-After instead of a 500, and background loops log the outage once, back off, and
// recover by themselves when the database answers again.

/** Error codes of a database that cannot be reached or cannot write right now (not of a bad statement). */
const UNAVAILABLE_CODES = new Set([
  // Network, as node and pg report them.
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // PostgreSQL: connection exceptions, too many connections, shutdown, recovery, read-only standby.
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300',
  '57P01',
  '57P02',
  '57P03',
  '25006',
  // SQLite: disk full, I/O error, locked past busy_timeout, read-only file, cannot open.
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_BUSY',
  'SQLITE_READONLY',
  'SQLITE_CANTOPEN',
]);

/** pg's own messages for a connection that went away (it sets no code on them). */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection closed|Client was closed and is not queryable/i;

/** True when `error` says the database is unreachable or cannot write now, rather than that a query is wrong. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('SQLITE_IOERR') || e.code.startsWith('SQLITE_BUSY'))) return true;
  return typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message);
}

export interface OutageLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * The failure state of one background loop: the first failure of a run of failures is logged (later
 * ones are counted, not logged), each failure doubles the wait before the next try up to `maxMs`, and
 * the first success after failures logs the recovery once.
 */
export class LoopBackoff {
  private failures = 0;

  constructor(
    private readonly what: string,
    private readonly log: OutageLog,
    private readonly minMs = 250,
    private readonly maxMs = 5000,
  ) {}

  /** Records a failure; returns how long to wait before the next try. */
  failed(error: unknown): number {
    this.failures++;
    if (this.failures === 1) this.log.warn({ err: error }, `${this.what} failed; retrying with backoff until it works again`);
    return Math.min(this.maxMs, this.minMs * 2 ** (this.failures - 1));
  }

  /** Records a success. */
  succeeded(): void {
    if (this.failures === 0) return;
    this.log.info({ failures: this.failures }, `${this.what} works again`);
    this.failures = 0;
  }

  get failing(): boolean {
    return this.failures > 0;
  }
}
