import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';

// One place for the storage conventions of both engines (style.md "Data"): app-generated ids,
// ISO-8601 UTC text timestamps, booleans as 0/1 and JSON as text.

const nextUlid = monotonicFactory();

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
