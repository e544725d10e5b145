import type { Cursor } from '../db/paging.ts';
import { AppError } from '../errors.ts';

// The HTTP side of paged admin listings: the cursor is opaque to clients (base64url of the position).

export function encodeCursor(cursor: Cursor | null): string | null {
  return cursor ? Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url') : null;
}

export function decodeCursor(text: string | undefined): Cursor | undefined {
  if (text === undefined || text === '') return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    // NUL cannot reach PostgreSQL (a driver error, not a 400): such a cursor was never issued by this API.
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      !`${value[0]}${value[1]}`.includes('\u0000')
    ) {
      return { createdAt: value[0], id: value[1] };
    }
  } catch {
    // fall through to the validation error
  }
  throw AppError.validation([{ field: 'querystring.cursor', reason: 'is not a cursor returned by this API' }]);
}

/** Parses the `limit` query parameter: 1..max, default `fallback`. */
export function parseLimit(text: string | undefined, fallback = 50, max = 200): number {
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw AppError.validation([{ field: 'querystring.limit', reason: `must be a whole number from 1 to ${max}` }]);
  }
  return Number(text);
}

/** The size and position of a requested page, checked in that order (the first problem is the one answered). */
export function readPage(query: { cursor?: string; limit?: string }): { after: Cursor | undefined; limit: number } {
  const limit = parseLimit(query.limit);
  return { after: decodeCursor(query.cursor), limit };
}

/** Querystring properties of every paged admin listing. */
export const pageQueryProperties = {
  cursor: { type: 'string', maxLength: 1000 },
  limit: { type: 'string', maxLength: 10 },
} as const;
