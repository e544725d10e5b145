/**
 * Which field values hold a person's e-mail address (access and erasure requests, issue 12; issue 20
 * item 5). The rules, defined here and not by either database, so that SQLite and PostgreSQL agree:
 *
 * - Case: both sides are compared in one folded form, Unicode NFC then JavaScript's `toLowerCase`
 *   (Unicode default lower-casing), so `ÄDA@example.com` holds `äda@example.com`, and an `A` followed
 *   by a combining diaeresis is the same `ä`. Neither engine's `lower()` decides anything.
 * - Whole addresses: a character that may be part of an address (RFC 5322 atext, a dot, or any
 *   letter, digit or mark, as internationalized addresses allow) directly before or after the match
 *   makes it a different address: `o'brien@example.com` does not hold `brien@example.com`, nor does
 *   `brien@example.com.evil.test` or `brien@example.com_x`.
 *
 * The database only narrows the search with `likePattern`, which matches a superset of what `holds`
 * accepts on both engines; `holds` decides.
 */

import { createHash } from 'node:crypto';

/** The one folded form both sides are compared in. */
export function foldAddress(text: string): string {
  return text.normalize('NFC').toLowerCase();
}

/**
 * How the audit log names the person of an access or erasure request (ADR 0023): `sha256:` and the hex
 * SHA-256 of the folded address. An owner who knows the address can find its requests; the log, which
 * outlives the erasure, does not hold the address itself.
 */
export function addressFingerprint(email: string): string {
  return `sha256:${createHash('sha256').update(foldAddress(email.trim()), 'utf8').digest('hex')}`;
}

/** RFC 5322 atext besides letters and digits, and the dot of a dot-atom. */
const ATEXT_SYMBOLS = "!#$%&'*+\\-/=?^_`{|}~.";
const NOT_AFTER_LOCAL_PART = `[\\p{L}\\p{N}\\p{M}${ATEXT_SYMBOLS}]`;
// A domain goes on with a letter, digit, mark, hyphen or underscore (DNS names hold `_`, as in
// `_dmarc`: `brien@example.com_x` is another address, issue 29), or with a dot followed by one of those.
const CONTINUES_DOMAIN = '[\\p{L}\\p{N}\\p{M}\\-_]|\\.[\\p{L}\\p{N}\\p{M}_]';

/**
 * ASCII letters that a non-ASCII character folds to (the Kelvin sign to `k`, `İ` to `i` and a combining
 * dot, the Greek varia to a backquote): in the SQL pattern they match any one character, since the
 * database's `lower()` may leave those characters as they are.
 */
const FOLDED_FROM_NON_ASCII = new Set(['k', 'i', '`']);

export interface PersonMatcher {
  /** The folded address searched for. */
  address: string;
  /** A LIKE pattern (escape character `\`) for `lower(data)`: every value `holds` accepts matches it. */
  likePattern: string;
  /** Whether a field value (a string, or any string inside arrays and objects) holds the address. */
  holds(value: unknown): boolean;
}

export function personMatcher(email: string): PersonMatcher {
  const address = foldAddress(email.trim());
  const escaped = address.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const whole = new RegExp(`(?<!${NOT_AFTER_LOCAL_PART})${escaped}(?!${CONTINUES_DOMAIN})`, 'u');
  const holds = (value: unknown): boolean =>
    typeof value === 'string'
      ? whole.test(foldAddress(value))
      : Array.isArray(value)
        ? value.some(holds)
        : value !== null && typeof value === 'object' && Object.values(value).some(holds);
  return { address, likePattern: likePatternOf(address), holds };
}

/**
 * ASCII characters stand for themselves (both engines lower-case ASCII in `lower()`); a non-ASCII run
 * becomes `%`, since what folds to it may be longer or shorter in the stored text (a letter and a
 * combining mark), and the letters of FOLDED_FROM_NON_ASCII become `_`. The stored JSON text writes
 * every character of an address literally (JSON.stringify escapes only quotes, backslashes and controls).
 */
function likePatternOf(address: string): string {
  let pattern = '%';
  let open = true;
  for (const char of address) {
    if (char.charCodeAt(0) > 0x7f) {
      if (!open) pattern += '%';
      open = true;
      continue;
    }
    pattern += FOLDED_FROM_NON_ASCII.has(char) ? '_' : /[\\%_]/.test(char) ? `\\${char}` : char;
    open = false;
  }
  return open ? pattern : `${pattern}%`;
}
