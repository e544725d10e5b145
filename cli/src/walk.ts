import fs from 'node:fs';
import path from 'node:path';
import ignore from 'ignore';
import { CliError, ExitCode } from './errors.ts';

// The tree walk: .gitignore and .flagpostignore files (at the root and in any folder, .gitignore syntax),
// the configuration's `ignore` patterns (at the root), and never `.git` nor `node_modules`. Symbolic
// links are not followed (no loops, nothing outside the tree).

export const IGNORE_FILES = ['.gitignore', '.flagpostignore'] as const;
export const ALWAYS_SKIPPED = new Set(['.git', 'node_modules']);
/** The server refuses a longer filePath. */
export const MAX_PATH_LENGTH = 2000;

export interface WalkStats {
  /** Files and folders left out by an ignore rule (a left-out folder counts once). */
  ignored: number;
  /** Folders that could not be read. */
  unreadableDirs: number;
}

export interface WalkEntry {
  absPath: string;
  /** Relative to the root, with `/` separators. */
  relPath: string;
}

type Ignore = ReturnType<typeof ignore>;

interface Rules {
  /** The folder the rules belong to, relative to the root, '' or ending with '/'. */
  base: string;
  ig: Ignore;
}

function rulesOf(absDir: string, base: string, extra: readonly string[]): Rules | undefined {
  const patterns: string[] = [];
  for (const name of IGNORE_FILES) {
    try {
      // One pattern per line: `add` splits a string on newlines, but not the strings of an array.
      patterns.push(...fs.readFileSync(path.join(absDir, name), 'utf8').split(/\r?\n/));
    } catch {
      // No such file (or unreadable): no rules from it.
    }
  }
  patterns.push(...extra);
  if (patterns.every((line) => line.trim() === '')) return undefined;
  // Case-sensitive, as git is by default on Linux.
  return { base, ig: ignore({ ignorecase: false }).add(patterns) };
}

/** The last matching rule wins, from the root's rules to the deepest folder's, as in git. */
function isIgnored(chain: readonly Rules[], relPath: string, isDir: boolean): boolean {
  let ignored = false;
  for (const rules of chain) {
    const result = rules.ig.test(relPath.slice(rules.base.length) + (isDir ? '/' : ''));
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

/**
 * The files of the tree that no rule leaves out, in a stable order (names sorted in each folder). Throws
 * the cap error when there are more than `maxFiles`.
 */
export function* walk(root: string, options: { extraIgnore: readonly string[]; maxFiles: number }, stats: WalkStats): Generator<WalkEntry> {
  const rootRules = rulesOf(root, '', options.extraIgnore);
  const stack: Array<{ absDir: string; relDir: string; chain: Rules[] }> = [{ absDir: root, relDir: '', chain: rootRules ? [rootRules] : [] }];
  let files = 0;
  while (stack.length > 0) {
    const { absDir, relDir, chain } = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(absDir, { withFileTypes: true });
    } catch {
      stats.unreadableDirs++;
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const dirs: Array<{ absDir: string; relDir: string; chain: Rules[] }> = [];
    for (const entry of entries) {
      if (ALWAYS_SKIPPED.has(entry.name)) continue;
      const relPath = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
      const absPath = path.join(absDir, entry.name);
      if (entry.isDirectory()) {
        if (isIgnored(chain, relPath, true)) {
          stats.ignored++;
          continue;
        }
        const own = rulesOf(absPath, `${relPath}/`, []);
        dirs.push({ absDir: absPath, relDir: relPath, chain: own ? [...chain, own] : chain });
      } else if (entry.isFile()) {
        if (isIgnored(chain, relPath, false)) {
          stats.ignored++;
          continue;
        }
        files++;
        if (files > options.maxFiles) {
          throw new CliError(
            ExitCode.limit,
            `Stopped: more than ${options.maxFiles} files to scan (the --max-files cap). Nothing was uploaded. ` +
              `Raise the cap with --max-files (or FLAGPOST_SCAN_MAX_FILES, or "maxFiles" in .flagpostrc.json), ` +
              `or leave folders out with .flagpostignore.`,
          );
        }
        yield { absPath, relPath };
      }
      // Symbolic links, sockets and the like are not followed.
    }
    // Reversed onto the stack so that folders come out in name order.
    for (let i = dirs.length - 1; i >= 0; i--) stack.push(dirs[i]!);
  }
}

export type SkipReason = 'envFile' | 'binary' | 'minified' | 'tooLarge' | 'pathTooLong' | 'unreadable';

export const SKIP_LABELS: Record<SkipReason, string> = {
  envFile: '.env',
  binary: 'binary',
  minified: 'minified',
  tooLarge: 'too large',
  pathTooLong: 'path too long',
  unreadable: 'unreadable',
};

/** A NUL byte in the first 8 KB makes a file binary (git's own test). */
export const BINARY_SNIFF_BYTES = 8192;
/** A file of at least this many bytes whose average line is longer than MINIFIED_AVERAGE_LINE is minified. */
export const MINIFIED_MIN_BYTES = 4096;
export const MINIFIED_AVERAGE_LINE = 300;

const MINIFIED_NAME = /\.min\.[^/]+$/i;
/** `.env`, `.env.local`, `.envrc` and the like: where secrets live (skipped unless --scan-env-files). */
const ENV_FILE_NAME = /^\.env/;

/** Whether a file is skipped before reading it, from its path and size. */
export function skipByName(relPath: string, size: number, maxFileBytes: number, scanEnvFiles = false): SkipReason | undefined {
  if (!scanEnvFiles && ENV_FILE_NAME.test(relPath.slice(relPath.lastIndexOf('/') + 1))) return 'envFile';
  if (relPath.length > MAX_PATH_LENGTH) return 'pathTooLong';
  if (size > maxFileBytes) return 'tooLarge';
  if (MINIFIED_NAME.test(relPath.slice(relPath.lastIndexOf('/') + 1))) return 'minified';
  return undefined;
}

/** Whether a file is skipped from its content. */
export function skipByContent(buffer: Buffer, text?: string): SkipReason | undefined {
  if (buffer.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return 'binary';
  if (buffer.length >= MINIFIED_MIN_BYTES) {
    const content = text ?? buffer.toString('utf8');
    let lines = 1;
    for (let i = content.indexOf('\n'); i !== -1; i = content.indexOf('\n', i + 1)) lines++;
    if (content.length / lines > MINIFIED_AVERAGE_LINE) return 'minified';
  }
  return undefined;
}

/** The text of a file, or why it is skipped. */
export function readSource(entry: WalkEntry, maxFileBytes: number, scanEnvFiles = false): { text: string } | { skip: SkipReason } {
  let size: number;
  try {
    size = fs.statSync(entry.absPath).size;
  } catch {
    return { skip: 'unreadable' };
  }
  const byName = skipByName(entry.relPath, size, maxFileBytes, scanEnvFiles);
  if (byName) return { skip: byName };
  let buffer: Buffer;
  try {
    buffer = fs.readFileSync(entry.absPath);
  } catch {
    return { skip: 'unreadable' };
  }
  // The file may have grown since stat.
  if (buffer.length > maxFileBytes) return { skip: 'tooLarge' };
  const text = buffer.toString('utf8');
  const byContent = skipByContent(buffer, text);
  if (byContent) return { skip: byContent };
  return { text };
}
