import type { SelectQueryBuilder } from 'kysely';

/** A position in a listing ordered by (created_at, id), newest first. */
export interface Cursor {
  createdAt: string;
  id: string;
}

/** A page of a listing and the position after its last item (null on the last page). */
export interface Page<T> {
  items: T[];
  next: Cursor | null;
}

/**
 * Keyset pagination over (created_at, id), newest first: the rows strictly after `after`, at most
 * `limit + 1` of them, so that pageOf can tell whether another page follows.
 */
export function newestFirst<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  limit: number,
  after: Cursor | undefined,
): SelectQueryBuilder<DB, TB, O> {
  // The column names are the same in every paged table; the builder cannot type them generically.
  const q = query as unknown as SelectQueryBuilder<{ t: { created_at: string; id: string } }, 't', O>;
  const filtered = after
    ? q.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]))
    : q;
  return filtered
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1) as unknown as SelectQueryBuilder<DB, TB, O>;
}

/** Cuts the `limit + 1` rows of newestFirst to a page. */
export function pageOf<T extends Cursor>(rows: T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
}

/** newestFirst the other way round: oldest first, the rows strictly after `after` in that order. */
export function oldestFirst<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  limit: number,
  after: Cursor | undefined,
): SelectQueryBuilder<DB, TB, O> {
  const q = query as unknown as SelectQueryBuilder<{ t: { created_at: string; id: string } }, 't', O>;
  const filtered = after
    ? q.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]))
    : q;
  return filtered
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .limit(limit + 1) as unknown as SelectQueryBuilder<DB, TB, O>;
}
