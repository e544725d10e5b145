import { randomBytes, randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

// One place for the storage conventions of both engines (style.md "Data"): app-generated ids,
// ISO-8601 UTC text timestamps, booleans as 0/1 and JSON as text.

/**
 * ulid's random source: a uniform number in [0, 1) from 32 bits of a pool of cryptographic random bytes
 * refilled 4 KiB at a time. ulid's own asks the platform for one byte per character (16 calls an id),
 * which was a few percent of a write's CPU. 2^32 is a multiple of ulid's 32 symbols: no symbol is favoured.
 */
const pool = Buffer.alloc(4096);
let taken = pool.length;
function pooledRandom(): number {
  if (taken + 4 > pool.length) {
    randomFillSync(pool);
    taken = 0;
  }
  const value = pool.readUInt32LE(taken);
  taken += 4;
  return value / 0x1_0000_0000;
}

const nextUlid = monotonicFactory(pooledRandom);

/** A new time-ordered id: later ids sort after earlier ones, also within one millisecond. */
export function newId(): string {
  return nextUlid();
}

/** A random key of `bytes` bytes as URL-safe text. */
export function newKey(bytes = 16): string {
  return randomBytes(bytes).toString('base64url');
}

export function nowIso(clock: () => Date = () => new Date()): string {
  return clock().toISOString();
}

export const toBool = (value: number | boolean | null | undefined): boolean => value === 1 || value === true;
export const fromBool = (value: boolean): number => (value ? 1 : 0);

export function toJson(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

export function fromJson<T = unknown>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

// Constraint violations of both engines; only stores use these, to turn them into AppErrors.

/** True for a unique-constraint violation of SQLite or PostgreSQL. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string } | null;
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** True for a foreign-key violation of SQLite or PostgreSQL. */
export function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: string } | null;
  return e?.code === '23503' || e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
