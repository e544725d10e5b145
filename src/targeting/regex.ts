import v8 from 'node:v8';
import { MAX_PATTERN_LENGTH } from './limits.ts';

// Regular expressions that cannot hang the process. Two layers:
// - validation refuses what backtracking engines blow up on (backreferences, lookaround, a quantifier
//   inside a repeated group) and long patterns, so that a definition is safe on any engine;
// - matching uses V8's linear-time engine (the `l` flag, behind --enable-experimental-regexp-engine,
//   switched on once at first use) when this runtime has it, so even a pattern the static check
//   missed runs in time linear in the input. Input length is capped by the caller (limits.ts).

let linearSupported: boolean | undefined;
/** V8's linear-time engine flag; a variable, because linters (rightly) do not know it. */
const LINEAR = 'l';

function linearEngine(): boolean {
  if (linearSupported !== undefined) return linearSupported;
  try {
    new RegExp('a', LINEAR);
    linearSupported = true;
  } catch {
    try {
      v8.setFlagsFromString('--enable-experimental-regexp-engine');
      new RegExp('a', LINEAR);
      linearSupported = true;
    } catch {
      linearSupported = false;
    }
  }
  return linearSupported;
}

/** Why a pattern is refused, or undefined when it is safe to match. */
export function regexProblem(pattern: string): string | undefined {
  if (pattern.length === 0) return 'the pattern is empty';
  if (pattern.length > MAX_PATTERN_LENGTH) return `the pattern is longer than ${MAX_PATTERN_LENGTH} characters`;
  try {
    new RegExp(pattern);
  } catch {
    return 'the pattern is not a valid regular expression';
  }
  const shape = unsafeShape(pattern);
  if (shape) return shape;
  if (linearEngine()) {
    try {
      new RegExp(pattern, LINEAR);
    } catch {
      return 'the pattern cannot be matched in linear time (counted repetition too large?)';
    }
  }
  return undefined;
}

/** A matcher for a pattern that passed regexProblem. */
export function compileRegex(pattern: string): RegExp {
  return linearEngine() ? new RegExp(pattern, LINEAR) : new RegExp(pattern);
}

const QUANTIFIER = /^(?:[*+]|\{\d+,\d*\})/;

/** Backreferences, lookaround and nested quantifiers, found by a scan that knows escapes and classes. */
function unsafeShape(p: string): string | undefined {
  const groups: Array<{ quantified: boolean }> = [];
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const ch = p[i]!;
    if (ch === '\\') {
      const next = p[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(next) || next === 'k')) return 'backreferences are not allowed';
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      continue;
    }
    if (ch === '[') inClass = true;
    else if (ch === '(') {
      if (p.startsWith('(?=', i) || p.startsWith('(?!', i) || p.startsWith('(?<=', i) || p.startsWith('(?<!', i)) {
        return 'lookahead and lookbehind are not allowed';
      }
      groups.push({ quantified: false });
    } else if (ch === ')') {
      const group = groups.pop();
      if (group && QUANTIFIER.test(p.slice(i + 1)) && group.quantified) return 'a repeated group may not contain a repetition (nested quantifiers)';
      if (group?.quantified && groups.length > 0) groups[groups.length - 1]!.quantified = true;
      if (QUANTIFIER.test(p.slice(i + 1)) && groups.length > 0) groups[groups.length - 1]!.quantified = true;
    } else if ((ch === '*' || ch === '+' || QUANTIFIER.test(p.slice(i))) && groups.length > 0) {
      groups[groups.length - 1]!.quantified = true;
    }
  }
  return undefined;
}
