// Full-text search over a submission's field values (issue 34, docs/adr/0049-form-search-and-read-tokens.md).
// One rule makes the words of both engines: Flagpost splits, folds and lower-cases the text itself and
// hands the engines plain words, so that SQLite FTS5 and PostgreSQL's tsvector find the same submissions
// and no character of a query ever reaches either engine's query syntax.

/** Characters of field text indexed per submission, at most (PostgreSQL's tsvector holds 1 MB). */
export const MAX_SEARCH_CHARS = 100_000;
/** Words of a query that count, at most; the rest are ignored. */
export const MAX_QUERY_WORDS = 8;
/** Characters of one query word that count, at most. */
const MAX_WORD_CHARS = 64;

/** The words of a text: letters and digits, accents removed (é is e), lower case. */
export function wordsOf(text: string): string[] {
  return (
    text
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** The text indexed for a submission: the words of every field value (strings, numbers, booleans; not names, not files). */
export function searchText(data: unknown): string {
  const words: string[] = [];
  let length = 0;
  const visit = (value: unknown): void => {
    if (length >= MAX_SEARCH_CHARS) return;
    if (Array.isArray(value)) return value.forEach(visit);
    if (value !== null && typeof value === 'object') return Object.values(value).forEach(visit);
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return;
    for (const word of wordsOf(String(value))) {
      words.push(word);
      length += word.length + 1;
    }
  };
  visit(data);
  return words.join(' ').slice(0, MAX_SEARCH_CHARS);
}

/**
 * The words a query `q` searches for: every one must occur in the submission, each as the start of a
 * word (`ann` finds `Anna`). Empty when `q` has no letter or digit: such a query finds nothing.
 */
export function queryWords(q: string): string[] {
  return [...new Set(wordsOf(q))].slice(0, MAX_QUERY_WORDS).map((w) => w.slice(0, MAX_WORD_CHARS));
}

/** An FTS5 MATCH expression of query words: each quoted (words hold letters and digits only) as a prefix. */
export const fts5Match = (words: readonly string[]): string => words.map((w) => `"${w}"*`).join(' AND ');

/** A PostgreSQL to_tsquery('simple', ...) expression of query words, each a prefix. */
export const tsQuery = (words: readonly string[]): string => words.map((w) => `${w}:*`).join(' & ');
