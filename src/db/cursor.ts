import { AppError } from '../errors.ts';

/** Keyset pagination over (created_at, id), newest first. The cursor is opaque to clients. */
export interface Cursor {
  createdAt: string;
  id: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');
}

export function decodeCursor(text: string | undefined): Cursor | undefined {
  if (text === undefined || text === '') return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
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

/** Querystring schema of every paged admin listing. */
export const pageQuery = {
  type: 'object',
  properties: {
    cursor: { type: 'string', maxLength: 1000 },
    limit: { type: 'string', maxLength: 10 },
  },
} as const;
