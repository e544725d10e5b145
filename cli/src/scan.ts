import { CliError, ExitCode } from './errors.ts';
import type { Limits } from './config.ts';
import type { Matcher } from './matcher.ts';
import { redactSecrets } from './redact.ts';
import { readSource, type SkipReason, walk, type WalkStats } from './walk.ts';

// Walk + match: the references of every known slug, and the places where an unknown slug is used.

export interface Reference {
  filePath: string;
  lineNumber: number;
  lineContent: string;
}

export interface ScanStats extends WalkStats {
  /** Files read and searched. */
  scanned: number;
  skipped: Record<SkipReason, number>;
  /** References of known slugs (one per slug and line). */
  references: number;
}

export interface ScanResult {
  /** Known slug to its references, sorted by filePath and lineNumber; only slugs with references. */
  references: Map<string, Reference[]>;
  /** Unknown slug (found by a pattern) to where it is used; at most UNKNOWN_KEPT places in all are kept. */
  unknown: Map<string, Reference[]>;
  stats: ScanStats;
}

export const UNKNOWN_KEPT = 1000;
const ELLIPSIS = '…';

/**
 * The line as stored: trailing whitespace removed and, past `max` characters, a window of it around the
 * match, marked with ellipses. A surrogate pair is never cut in half.
 */
export function lineExcerpt(line: string, column: number, length: number, max: number): string {
  const trimmed = line.trimEnd();
  if (trimmed.length <= max) return trimmed;
  const width = max - 2;
  const centre = column + Math.floor(length / 2);
  const start = Math.max(0, Math.min(centre - Math.floor(width / 2), trimmed.length - width));
  let end = start + width;
  let from = start;
  if (from === 0) end += 1; // No leading ellipsis: one more character fits.
  if (end >= trimmed.length) {
    end = trimmed.length;
    from = Math.max(0, end - (max - 1));
  }
  const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
  const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;
  if (from > 0 && isLow(trimmed.charCodeAt(from))) from++;
  if (end < trimmed.length && isHigh(trimmed.charCodeAt(end - 1))) end--;
  return `${from > 0 ? ELLIPSIS : ''}${trimmed.slice(from, end)}${end < trimmed.length ? ELLIPSIS : ''}`;
}

/**
 * The stored line: its secret-looking values redacted (redact.ts), keeping the matched text, then cut to
 * `max` characters around the match, found again in the redacted line.
 */
function excerptWithoutSecrets(line: string, match: { index: number; length: number; slug: string }, lineStart: number, max: number): string {
  const column = match.index - lineStart;
  const matched = line.slice(column, column + match.length);
  const redacted = redactSecrets(line, [matched, match.slug]);
  if (redacted === line) return lineExcerpt(line, column, match.length, max);
  // The redaction may have moved the match; the occurrence nearest to its old column stands for it.
  let best = -1;
  for (let at = redacted.indexOf(matched); at !== -1; at = redacted.indexOf(matched, at + 1)) {
    if (best === -1 || Math.abs(at - column) < Math.abs(best - column)) best = at;
  }
  return lineExcerpt(redacted, Math.max(best, 0), match.length, max);
}

/** Offsets of line starts, for line numbers of match positions. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** The index in `starts` of the line that holds `offset` (binary search). */
function lineOf(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export interface ScanOptions {
  dir: string;
  ignore: readonly string[];
  limits: Pick<Limits, 'maxFiles' | 'maxReferences' | 'maxFileBytes' | 'maxLineLength'>;
  /** Read `.env*` files too (skipped by default). */
  scanEnvFiles?: boolean;
}

export function scan(matcher: Matcher, options: ScanOptions): ScanResult {
  const stats: ScanStats = {
    scanned: 0,
    ignored: 0,
    unreadableDirs: 0,
    references: 0,
    skipped: { envFile: 0, binary: 0, minified: 0, tooLarge: 0, pathTooLong: 0, unreadable: 0 },
  };
  const references = new Map<string, Reference[]>();
  const unknown = new Map<string, Reference[]>();
  let unknownKept = 0;
  const { maxReferences, maxLineLength, maxFileBytes, maxFiles } = options.limits;

  for (const entry of walk(options.dir, { extraIgnore: options.ignore, maxFiles }, stats)) {
    const source = readSource(entry, maxFileBytes, options.scanEnvFiles ?? false);
    if ('skip' in source) {
      stats.skipped[source.skip]++;
      continue;
    }
    stats.scanned++;
    const { text } = source;
    const matches = matcher.find(text);
    if (matches.length === 0) continue;
    matches.sort((a, b) => a.index - b.index);
    const starts = lineStarts(text);
    const seen = new Set<string>();
    for (const match of matches) {
      const line = lineOf(starts, match.index);
      const key = `${match.known ? 'k' : 'u'}${line}\0${match.slug}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const lineStart = starts[line]!;
      const lineEnd = line + 1 < starts.length ? starts[line + 1]! - 1 : text.length;
      const reference: Reference = {
        filePath: entry.relPath,
        lineNumber: line + 1,
        // Secrets are redacted in the whole line, before the excerpt could cut one in half and hide it from the rules.
        lineContent: excerptWithoutSecrets(text.slice(lineStart, lineEnd), match, lineStart, maxLineLength),
      };
      if (match.known) {
        stats.references++;
        if (stats.references > maxReferences) {
          throw new CliError(
            ExitCode.limit,
            `Stopped: more than ${maxReferences} references found (the --max-references cap). Nothing was uploaded. ` +
              `Raise the cap with --max-references (or FLAGPOST_SCAN_MAX_REFERENCES, or "maxReferences" in .flagpostrc.json), ` +
              `or leave generated or vendored code out with .flagpostignore.`,
          );
        }
        const list = references.get(match.slug);
        if (list) list.push(reference);
        else references.set(match.slug, [reference]);
      } else {
        const list = unknown.get(match.slug) ?? [];
        if (!unknown.has(match.slug)) unknown.set(match.slug, list);
        if (unknownKept < UNKNOWN_KEPT) {
          list.push(reference);
          unknownKept++;
        }
      }
    }
  }
  const byPlace = (a: Reference, b: Reference) => (a.filePath < b.filePath ? -1 : a.filePath > b.filePath ? 1 : a.lineNumber - b.lineNumber);
  for (const list of references.values()) list.sort(byPlace);
  for (const list of unknown.values()) list.sort(byPlace);
  return { references, unknown, stats };
}
