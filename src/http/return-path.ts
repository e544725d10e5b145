// Where a sign-in returns to (issue 29 item 5): the one check of the server (the single sign-on callback)
// and of the dashboard (password sign-in), which imports this file. It imports nothing.

/** Where a sign-in goes when `next` is missing or refused. */
export const DEFAULT_RETURN_PATH = '/projects';

/** Whitespace (tab, CR, LF, no-break and Unicode spaces) and control characters: browsers strip some of them. */
const UNSAFE = /[\s\p{Cc}\p{Cf}]/u;

/**
 * The path on `publicUrl`'s origin that `next` names, or DEFAULT_RETURN_PATH. `next` must be an absolute
 * path without whitespace or control characters (a browser strips a tab from `/\t/evil.example/` and
 * lands on another origin) or backslashes, and must resolve to `publicUrl`'s own origin.
 */
export function returnPath(next: string | null | undefined, publicUrl: string): string {
  if (!next || next.length > 500 || !next.startsWith('/') || next.startsWith('//') || next.includes('\\') || UNSAFE.test(next)) {
    return DEFAULT_RETURN_PATH;
  }
  let origin: string;
  let resolved: URL;
  try {
    origin = new URL(publicUrl).origin;
    resolved = new URL(next, origin);
  } catch {
    return DEFAULT_RETURN_PATH;
  }
  if (resolved.origin !== origin) return DEFAULT_RETURN_PATH;
  return `${resolved.pathname}${resolved.search}${resolved.hash}`;
}
