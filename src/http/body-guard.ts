import type { FastifyRequest } from 'fastify';
import { AppError, type FieldProblem, messages } from '../errors.ts';
import { surfaceOf } from './error-handler.ts';

/** Deeper JSON is refused: serializing or storing it could exhaust the stack (a 500 instead of a 400). */
export const MAX_JSON_DEPTH = 32;

/**
 * The first problem of a parsed JSON body that no schema catches: nesting deeper than MAX_JSON_DEPTH,
 * or a NUL character in a key or a string, which PostgreSQL cannot store in text (SQLite can: without
 * this check the two engines would answer differently).
 */
export function inspectJson(value: unknown, depth = 0): FieldProblem | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? { field: 'body', reason: 'must not contain NUL characters' } : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= MAX_JSON_DEPTH) return { field: 'body', reason: `must not be nested deeper than ${MAX_JSON_DEPTH} levels` };
  for (const [key, inner] of Object.entries(value)) {
    if (key.includes('\u0000')) return { field: 'body', reason: 'must not contain NUL characters' };
    const problem = inspectJson(inner, depth + 1);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * preValidation hook of the whole app: path parameters and parsed bodies pass inspectJson, and so do
 * the query strings of the admin API, whose filters and cursors reach the database (the public
 * interfaces read no query parameter into a query).
 */
export async function bodyGuard(request: FastifyRequest): Promise<void> {
  const surface = surfaceOf(request);
  const problem = inspectJson(request.params) ?? (surface === 'admin' ? inspectJson(request.query) : undefined) ?? inspectJson(request.body);
  if (!problem) return;
  if (surface === 'forms') throw new AppError('validation', messages.formUnreadable);
  if (surface === 'flags' || surface === 'flags-preview') throw AppError.validation([problem], messages.generic);
  throw AppError.validation([problem]);
}
