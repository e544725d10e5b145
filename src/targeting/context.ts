import { EXTENSION_KEY } from './conditions.ts';
import { MAX_CONTEXT_DEPTH, MAX_CONTEXT_ENTRIES, MAX_CONTEXT_STRING_LENGTH } from './limits.ts';

// Evaluation contexts come from clients: anything JSON can hold, and some things it should not. A
// context is copied once per request into fresh objects, within bounds, before any flag reads it.

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
export function prepareContext(raw: unknown): PreparedContext {
  if (raw === undefined || raw === null) return EMPTY;
  if (typeof raw !== 'object' || Array.isArray(raw)) return { problem: 'the context must be a JSON object' };
  const budget = { entries: 0 };
  const copied = copyValue(raw, 1, budget);
  if (copied instanceof Problem) return { problem: copied.message };
  const context = copied as Record<string, unknown>;
  if (context.targetingKey !== undefined && typeof context.targetingKey !== 'string') return { problem: 'targetingKey must be a string' };
  return { context };
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
