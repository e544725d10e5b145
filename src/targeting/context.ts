import { EXTENSION_KEY } from './conditions.ts';
import { MAX_CONTEXT_DEPTH, MAX_CONTEXT_ENTRIES, MAX_CONTEXT_STRING_LENGTH } from './limits.ts';

// Evaluation contexts come from clients: anything JSON can hold, and some things it should not. A
// context is checked once per request, within bounds, before any flag reads it, and copied into fresh
// objects unless the caller hands over a value of its own fresh from JSON.parse that holds no dropped key.

/** A context fit for evaluation, or why it is not (answered as INVALID_CONTEXT). */
export type PreparedContext = { context: Record<string, unknown>; problem?: undefined } | { problem: string; context?: undefined };

/** Keys that are never copied: prototype keys, and the reserved `$flagd` / `$flagpost` that flagd and Flagpost set. */
const DROPPED = new Set(['__proto__', 'constructor', 'prototype', '$flagd', EXTENSION_KEY]);

const EMPTY: PreparedContext = Object.freeze({ context: Object.freeze({}) as Record<string, unknown> });

/**
 * Checks and copies an evaluation context: a JSON object (absent or null is the empty context) of
 * strings, finite numbers, booleans, null, arrays and objects, at most MAX_CONTEXT_DEPTH deep, with at
 * most MAX_CONTEXT_ENTRIES values and strings of at most MAX_CONTEXT_STRING_LENGTH characters;
 * `targetingKey`, when present, a string. Never throws.
 */
export function prepareContext(raw: unknown, options: PrepareOptions = {}): PreparedContext {
  if (raw === undefined || raw === null) return EMPTY;
  if (typeof raw !== 'object' || Array.isArray(raw)) return { problem: 'the context must be a JSON object' };
  if (options.parsed) {
    // The same walk as the copy, in the same order, so a problem found here is the one the copy finds.
    const checked = checkValue(raw, 1, { entries: 0 });
    if (checked instanceof Problem) return { problem: checked.message };
    if (checked) return withTargetingKey(raw as Record<string, unknown>);
  }
  const budget = { entries: 0 };
  const copied = copyValue(raw, 1, budget);
  if (copied instanceof Problem) return { problem: copied.message };
  return withTargetingKey(copied as Record<string, unknown>);
}

export interface PrepareOptions {
  /**
   * The context is the caller's own value fresh from JSON.parse (plain objects and arrays, no
   * accessors), which it will not change and hands over: when it holds no key that is dropped, it is
   * used as it is instead of copied.
   */
  parsed?: boolean;
}

function withTargetingKey(context: Record<string, unknown>): PreparedContext {
  if (context.targetingKey !== undefined && typeof context.targetingKey !== 'string') return { problem: 'targetingKey must be a string' };
  return { context };
}

/**
 * copyValue's checks without the copy: true when the value is fit as it is, a Problem (the one copyValue
 * answers), or false when it holds a key that is dropped (then it is copied).
 */
function checkValue(value: unknown, depth: number, budget: { entries: number }): boolean | Problem {
  if (++budget.entries > MAX_CONTEXT_ENTRIES) return fail(`the context has more than ${MAX_CONTEXT_ENTRIES} values`);
  switch (typeof value) {
    case 'string':
      return value.length > MAX_CONTEXT_STRING_LENGTH ? fail(`a context string is longer than ${MAX_CONTEXT_STRING_LENGTH} characters`) : true;
    case 'number':
      return Number.isFinite(value) ? true : fail('a context number is not finite');
    case 'boolean':
      return true;
    case 'object':
      break;
    default:
      return fail('a context value is not JSON');
  }
  if (value === null) return true;
  if (depth > MAX_CONTEXT_DEPTH) return fail(`the context is nested deeper than ${MAX_CONTEXT_DEPTH} levels`);
  if (Array.isArray(value)) {
    for (const item of value) {
      const checked = checkValue(item, depth + 1, budget);
      if (checked !== true) return checked;
    }
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return fail('a context value is not JSON');
  for (const key of Object.keys(value)) {
    if (key.length > MAX_CONTEXT_STRING_LENGTH) return fail(`a context key is longer than ${MAX_CONTEXT_STRING_LENGTH} characters`);
    if (DROPPED.has(key)) return false;
    const checked = checkValue((value as Record<string, unknown>)[key], depth + 1, budget);
    if (checked !== true) return checked;
  }
  return true;
}

class Problem {
  constructor(readonly message: string) {}
}
const fail = (message: string) => new Problem(message);

function copyValue(value: unknown, depth: number, budget: { entries: number }): unknown {
  if (++budget.entries > MAX_CONTEXT_ENTRIES) return fail(`the context has more than ${MAX_CONTEXT_ENTRIES} values`);
  switch (typeof value) {
    case 'string':
      return value.length > MAX_CONTEXT_STRING_LENGTH ? fail(`a context string is longer than ${MAX_CONTEXT_STRING_LENGTH} characters`) : value;
    case 'number':
      return Number.isFinite(value) ? value : fail('a context number is not finite');
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      return fail('a context value is not JSON');
  }
  if (value === null) return null;
  if (depth > MAX_CONTEXT_DEPTH) return fail(`the context is nested deeper than ${MAX_CONTEXT_DEPTH} levels`);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const copied = copyValue(item, depth + 1, budget);
      if (copied instanceof Problem) return copied;
      out.push(copied);
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return fail('a context value is not JSON');
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key.length > MAX_CONTEXT_STRING_LENGTH) return fail(`a context key is longer than ${MAX_CONTEXT_STRING_LENGTH} characters`);
    if (DROPPED.has(key)) continue;
    const copied = copyValue((value as Record<string, unknown>)[key], depth + 1, budget);
    if (copied instanceof Problem) return copied;
    if (copied !== undefined) out[key] = copied;
  }
  return out;
}
