import { RE2JS } from 're2js';
import { MAX_PATTERN_LENGTH } from './limits.ts';

// Regular expressions that cannot hang the process: patterns are compiled and matched by re2js, a
// JavaScript port of RE2 whose matching time is linear in the input, whatever the pattern (no
// backtracking). RE2 has no backreferences and no lookaround, so such patterns are refused at
// validation, as are long patterns; input length is capped by the caller (limits.ts).

/** A compiled pattern: `test` finds a match anywhere in the input, as RegExp.prototype.test does. */
export interface SafeRegex {
  test(input: string): boolean;
}

function compile(pattern: string, caseInsensitive: boolean): RE2JS {
  return RE2JS.compile(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
}

/** Why a pattern is refused, or undefined when it is safe to match. */
export function regexProblem(pattern: string): string | undefined {
  if (pattern.length === 0) return 'the pattern is empty';
  if (pattern.length > MAX_PATTERN_LENGTH) return `the pattern is longer than ${MAX_PATTERN_LENGTH} characters`;
  if (/\\[1-9]|\\k</.test(pattern)) return 'backreferences are not allowed';
  if (/\(\?<?[=!]/.test(pattern)) return 'lookahead and lookbehind are not allowed';
  try {
    compile(pattern, false);
  } catch {
    return 'the pattern is not a valid regular expression (RE2 syntax)';
  }
  return undefined;
}

/** A matcher for a pattern that passed regexProblem; linear time in the input. */
export function compileRegex(pattern: string, caseInsensitive = false): SafeRegex {
  const re = compile(pattern, caseInsensitive);
  return { test: (input) => re.matcher(input).find() };
}
