import {
  MAX_CONDITIONS,
  MAX_CONTEXT_ENTRIES,
  MAX_ITERATOR_NESTING,
  MAX_LOGIC_COST,
  MAX_FLAG_CIDRS,
  MAX_MATCH_INPUT_LENGTH,
  MAX_REGEX_STATES,
} from './limits.ts';
import { regexStates } from './regex.ts';
import type { Condition } from './targeting.ts';

// A static bound on what evaluating one JSON Logic can cost (issue 29), so that stored targeting
// cannot pin the process: flagd-core runs JSON Logic as compiled JavaScript that cannot be stopped
// half-way, so the bound is checked before it ever runs — at write time (validate.ts) and again when
// a snapshot compiles a flag (engine.ts), which answers GENERAL for a flag past it.
//
// The model (docs/adr/0024): every value has a weight, a bound on its entries counted as a tree (an
// array of n plain values weighs n + n; a context value weighs at most MAX_CONTEXT_ENTRIES). The cost
// counts operators evaluated, iterations, and the entries an operator inside an iterator reads
// (a comparison of an array, `in`, `merge`, `cat`). An iterator runs its body once per entry of its
// array; the body's cost grows with the weight of the item, and the items of one array weigh no more
// than the array together, so the body costs at most n·body(0) + body(all items) over the whole run
// (body costs are convex in the item's weight). Operators outside iterators run once and read the
// context once, as parsing it did: they count one each.

/** The iterators of flagd's JSON Logic. */
const ITERATORS = new Set(['map', 'filter', 'reduce', 'all', 'some', 'none']);
/** Operators that pass one of their operands on (the result weighs as much as the heaviest). */
const PASSING = new Set(['if', 'and', 'or']);
/** What a `$ref` to a segment may cost: its conditions, a few operators each (conditions.ts). */
const SEGMENT_COST = MAX_CONDITIONS * 8;
/** A weight beyond every real one, to tell an accumulator that grows by addition from one that multiplies. */
const HUGE = 1e9;

interface Scope {
  /** `top`: vars read the context; `item`: the current entry; `reduce`: `current` and `accumulator`. */
  readonly kind: 'top' | 'item' | 'reduce';
  readonly item: number;
  readonly accumulator: number;
  readonly depth: number;
}

interface Bound {
  cost: number;
  weight: number;
}

export interface CostProblem {
  path: string;
  message: string;
}

class Refused extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

const add = (...xs: number[]) => xs.reduce((a, b) => a + b, 0);
/** A product where zero iterations of an unbounded body cost nothing (0 × Infinity is NaN). */
const times = (a: number, b: number) => (a === 0 || b === 0 ? 0 : a * b);
const isOperation = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1;
const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The cost bound of a JSON Logic (already checked by jsonLogicProblem), or why it has none. */
export function logicCost(logic: unknown): { cost: number } | CostProblem {
  try {
    const { cost } = bound(logic, { kind: 'top', item: 0, accumulator: 0, depth: 0 }, '');
    return { cost };
  } catch (e) {
    if (e instanceof Refused) return { path: e.path, message: e.message };
    throw e;
  }
}

/** Why a JSON Logic may cost too much to evaluate (relative path), or undefined. */
export function logicCostProblem(logic: unknown): CostProblem | undefined {
  const result = logicCost(logic);
  if ('message' in result) return result;
  if (result.cost > MAX_LOGIC_COST)
    return {
      path: '',
      message: `evaluating this JSON Logic may take ${Math.round(result.cost)} operations, more than ${MAX_LOGIC_COST} (nested iterators over large arrays)`,
    };
  return undefined;
}

function bound(logic: unknown, scope: Scope, path: string): Bound {
  if (Array.isArray(logic)) {
    const items = logic.map((item, i) => bound(item, scope, `${path}/${i}`));
    return { cost: add(...items.map((b) => b.cost)), weight: logic.length + add(...items.map((b) => b.weight)) };
  }
  if (!isOperation(logic)) return { cost: 0, weight: 0 };
  const op = Object.keys(logic)[0]!;
  const raw = logic[op];
  const at = `${path}/${escape(op)}`;
  if (op === 'var') return varBound(raw, scope, at);
  if (op === '$ref') return { cost: SEGMENT_COST, weight: 0 };
  if (ITERATORS.has(op)) return iteratorBound(op, raw, scope, at);
  const args = Array.isArray(raw) ? raw.map((a, i) => bound(a, scope, `${at}/${i}`)) : [bound(raw, scope, at)];
  const cost = 1 + add(...args.map((b) => b.cost));
  const read = add(...args.map((b) => b.weight));
  if (PASSING.has(op)) return { cost, weight: Math.max(0, ...args.map((b) => b.weight)) };
  if (op === '!' || op === '!!') return { cost, weight: 0 };
  // Inside an iterator the operator runs once per entry: what it reads counts each time.
  const reads = scope.kind === 'top' ? 0 : read;
  if (op === 'merge' || op === 'missing' || op === 'missing_some') return { cost: cost + reads, weight: read };
  // A string weighs like the entries it was made of, so that an accumulator concatenated with itself is seen to double.
  if (op === 'cat') return { cost: cost + reads, weight: read + 1 };
  return { cost: cost + reads, weight: 0 };
}

function varBound(raw: unknown, scope: Scope, at: string): Bound {
  let path = raw;
  let fallback: Bound = { cost: 0, weight: 0 };
  if (Array.isArray(raw)) {
    path = raw[0];
    if (raw.length > 1) fallback = bound(raw[1], scope, `${at}/1`);
  }
  if (path === undefined || path === null) path = '';
  if (typeof path === 'number') path = String(path);
  if (typeof path !== 'string') throw new Refused(at, 'a var path is a string (computed paths are not accepted)');
  if (path.includes('../')) throw new Refused(at, 'var paths may not go up with ../');
  let weight: number;
  if (scope.kind === 'top') weight = MAX_CONTEXT_ENTRIES;
  else if (scope.kind === 'item') weight = scope.item;
  else if (path === '') weight = scope.item + scope.accumulator;
  else if (path === 'current' || path.startsWith('current.')) weight = scope.item;
  else if (path === 'accumulator' || path.startsWith('accumulator.')) weight = scope.accumulator;
  else weight = 0;
  return { cost: 1 + fallback.cost, weight: Math.max(weight, fallback.weight) };
}

function iteratorBound(op: string, raw: unknown, scope: Scope, at: string): Bound {
  if (!Array.isArray(raw) || raw.length < 2) return { cost: 1, weight: 0 };
  const [selector, body, initial] = raw as [unknown, unknown, unknown];
  if (!(Array.isArray(selector) || (isOperation(selector) && 'var' in selector))) throw new Refused(`${at}/0`, `${op} iterates over a var or a literal array`);
  if (scope.depth >= MAX_ITERATOR_NESTING) throw new Refused(at, `iterators nest at most ${MAX_ITERATOR_NESTING} deep`);
  const over = bound(selector, scope, `${at}/0`);
  const n = over.weight;
  const depth = scope.depth + 1;
  if (op !== 'reduce') {
    const inner = (item: number) => bound(body, { kind: 'item', item, accumulator: 0, depth }, `${at}/1`);
    const empty = inner(0);
    const full = inner(n);
    const cost = 1 + over.cost + times(n, 1 + empty.cost) + full.cost;
    const weight = op === 'map' ? n + times(n, empty.weight) + full.weight : op === 'filter' ? n : 0;
    return { cost, weight };
  }
  const start = raw.length > 2 ? bound(initial, scope, `${at}/2`) : { cost: 0, weight: n };
  const step = (accumulator: number, item: number) => bound(body, { kind: 'reduce', item, accumulator, depth }, `${at}/1`);
  const still = step(0, 0).weight;
  if (step(HUGE, 0).weight > HUGE + still) throw new Refused(`${at}/1`, 'the accumulator of reduce may grow without bound (it is used more than once)');
  const accumulator = start.weight + times(n, still) + step(0, n).weight;
  const cost = 1 + over.cost + start.cost + times(n, 1 + step(accumulator, 0).cost) + step(accumulator, n).cost;
  return { cost, weight: accumulator };
}

/** The states of the distinct `matches` patterns among conditions (regexStates), added up. */
export function regexStatesOf(conditions: readonly Condition[]): number {
  let total = 0;
  for (const c of distinct(conditions, 'matches')) total += typeof c.values[0] === 'string' ? regexStates(c.values[0]) : 0;
  return total;
}

/** The CIDRs of the distinct `inCidr` conditions among conditions, added up (each costs one test). */
export function cidrsOf(conditions: readonly Condition[]): number {
  let total = 0;
  for (const c of distinct(conditions, 'inCidr')) total += c.values.length;
  return total;
}

function distinct(conditions: readonly Condition[], operator: string): Condition[] {
  const seen = new Set<string>();
  return conditions.filter((c) => {
    if (c.operator !== operator) return false;
    const key = JSON.stringify([c.attribute, c.values, c.caseInsensitive === true]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Why conditions need more work than one flag's evaluation may (the conditions Flagpost evaluates
 * itself: regular expressions and CIDR lists, all of them before the rules run), or undefined.
 */
export function extensionWorkProblem(conditions: readonly Condition[], whose: string): string | undefined {
  const states = regexStatesOf(conditions);
  if (states > MAX_REGEX_STATES)
    return `${whose} regular expressions have ${states} states together, more than ${MAX_REGEX_STATES} (each is matched against up to ${MAX_MATCH_INPUT_LENGTH} characters)`;
  const cidrs = cidrsOf(conditions);
  if (cidrs > MAX_FLAG_CIDRS) return `${whose} inCidr conditions list ${cidrs} CIDRs together, more than ${MAX_FLAG_CIDRS}`;
  return undefined;
}
