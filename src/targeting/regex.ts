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

/**
 * A bound on the states re2js's matcher may keep alive per input character: the pattern's atoms with
 * counted repetitions spelled out (`a{50}` is 50 states, `(ab){3}` 6) plus one per operator. Matching
 * time is at most proportional to states times input length (docs/adr/0024), so this, not the pattern's
 * length, is what limits.ts caps per flag.
 */
export function regexStates(pattern: string): number {
  let i = 0;
  // One alternation: its branches' states added up.
  const alternation = (): number => {
    let total = sequence();
    while (pattern[i] === '|') {
      i++;
      total += sequence() + 1;
    }
    return total;
  };
  const sequence = (): number => {
    let total = 0;
    while (i < pattern.length && pattern[i] !== '|' && pattern[i] !== ')') total += repeated(atom());
    return total;
  };
  const atom = (): number => {
    const c = pattern[i++]!;
    if (c === '\\') {
      const next = pattern[i++];
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', i);
        const text = end < 0 ? pattern.slice(i) : pattern.slice(i, end);
        i = end < 0 ? pattern.length : end + 2;
        return text.length;
      }
      if ((next === 'p' || next === 'P') && pattern[i] === '{') i = Math.max(i, pattern.indexOf('}', i) + 1);
      return 1;
    }
    if (c === '[') {
      if (pattern[i] === '^') i++;
      if (pattern[i] === ']') i++;
      while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : pattern.startsWith('[:', i) ? pattern.indexOf(':]', i) + 2 - i : 1;
      i++;
      return 1;
    }
    if (c === '(') {
      // (?flags) alone sets flags; (?:...), (?i:...), (?P<name>...) and (?<name>...) group.
      if (pattern[i] === '?') {
        const close = /^\?[a-zA-Z-]*\)/.exec(pattern.slice(i));
        if (close) {
          i += close[0].length;
          return 0;
        }
        const open = /^\?(?:[a-zA-Z-]*:|P?<[^>]*>)/.exec(pattern.slice(i));
        if (open) i += open[0].length;
      }
      const inner = alternation();
      i++; // ')'
      return inner + 1;
    }
    return 1;
  };
  const repeated = (states: number): number => {
    const c = pattern[i];
    let result = states;
    if (c === '*' || c === '+' || c === '?') {
      i++;
      result = states + 1;
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (m) {
        i += m[0].length;
        const most = m[3] ? Number(m[3]) : Number(m[1]);
        result = Math.max(1, most + (m[2] !== undefined && !m[3] ? 1 : 0)) * (states + 1);
      }
    }
    if (pattern[i] === '?') i++; // lazy
    return result;
  };
  let total = 0;
  while (i < pattern.length) {
    total += alternation();
    if (pattern[i] === ')') i++;
  }
  return total;
}
