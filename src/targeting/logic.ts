import { createRequire } from 'node:module';

// Flagpost's own evaluator for the JSON Logic its compiler emits (compile.ts, conditions.ts): each
// flag's logic becomes a tree of closures once, then runs against the prepared context without
// copying it. It reproduces what flagd-core 4.0.1 does with the same logic — json-logic-engine's
// compiled ("build") semantics for the standard operators, flagd-core's own starts_with / ends_with /
// sem_ver / fractional, `$flagd.flagKey` / `$flagd.timestamp` — and the differential tests hold the
// two to the same answers. Anything outside that subset (another operator, a shape the engine treats
// specially) is not compiled: compileLogic answers undefined and the caller evaluates the flag with
// flagd-core instead.

// The packages flagd-core evaluates with, as direct dependencies pinned to the versions flagd-core 4.0.1
// resolves to (package.json); they have no type declarations, hence require and the shapes below.
const load = createRequire(import.meta.url);
// Called without `new`, imurmurhash hashes with one shared state instead of a new object (evaluation is synchronous).
const MurmurHash3 = load('imurmurhash') as (key: string) => { result(): number };
interface SemVerLike {
  major: number;
  minor: number;
}
const semver = load('semver') as {
  parse(v: string): SemVerLike | null;
  coerce(v: string): SemVerLike | null;
  compare(a: SemVerLike, b: SemVerLike): number;
};

/** What a compiled logic reads besides the context: flagd's `$flagd` properties. */
export interface LogicScope {
  /** The flag key (`$flagd.flagKey`). */
  readonly key: string;
}

/**
 * One evaluation's memo: any object, new for each context evaluated (CompiledEnvironment.prepare makes
 * one per request). Shared subtrees (see SharedLogic) remember their result for the last memo they saw.
 */
export type Memo = object;

export type Program = (context: Record<string, unknown>, scope: LogicScope, memo?: Memo) => unknown;

/**
 * The compiled subtrees of one environment's flags by their JSON text, so that a subtree that several
 * flags hold (a segment, a condition, a rule's conditions) is one closure, evaluated once per memo: for
 * the same context it answers what it answered last time. Only subtrees whose result follows from the
 * context alone are shared: none that reads `$flagd` (the flag key, the clock) or buckets with
 * `fractional` (which hashes the flag key). Results are never kept beyond the memo they were made for.
 */
export class SharedLogic {
  readonly nodes = new Map<string, Program>();
  /** The characters of the keys held. */
  chars = 0;

  /** True when no more subtrees are taken: those compiled then are not shared. */
  get full(): boolean {
    return this.nodes.size >= MAX_SHARED || this.chars >= MAX_SHARED_CHARS;
  }

  add(key: string, node: Program): void {
    this.nodes.set(key, node);
    this.chars += key.length;
  }
}

class Unsupported extends Error {}

/** The table of shared subtrees during one compileLogic call. */
let sharing: SharedLogic | undefined;

/**
 * The logic as closures, or undefined when it uses anything this evaluator does not reproduce exactly.
 * Given `shared`, subtrees that flags have in common are compiled once and evaluated once per memo.
 */
export function compileLogic(logic: unknown, shared?: SharedLogic): Program | undefined {
  sharing = shared;
  try {
    const node = compileNode(logic);
    return typeof node === 'function' ? node : () => node.value;
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  } finally {
    sharing = undefined;
    keys = undefined;
  }
}

/** Shared subtrees kept per table, and the characters of their keys; past either, others are compiled unshared. */
const MAX_SHARED = 50_000;
const MAX_SHARED_CHARS = 8_000_000;

/**
 * A subtree's closure that evaluates once per memo. A result is kept only for the memo it was made
 * for (one evaluation context): a later evaluation brings another memo and evaluates again. Only
 * primitive results are kept (conditions answer booleans), so that no part of a context outlives its
 * request; a subtree that throws keeps nothing (it throws again).
 */
function memoized(inner: Program): Program {
  let lastMemo: Memo | undefined;
  let last: unknown;
  return (ctx, scope, memo) => {
    if (memo === undefined) return inner(ctx, scope, memo);
    if (memo === lastMemo) return last;
    const value = inner(ctx, scope, memo);
    if (value === null || (typeof value !== 'object' && typeof value !== 'function')) {
      last = value;
      lastMemo = memo;
    }
    return value;
  };
}

type Node = Program | { readonly value: unknown };
const unsupported = (): never => {
  throw new Unsupported();
};
const isPrimitive = (v: unknown) => v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const run = (n: Node, ctx: Record<string, unknown>, scope: LogicScope, memo: Memo | undefined): unknown =>
  typeof n === 'function' ? n(ctx, scope, memo) : n.value;

/** json-logic-engine's truthiness (engine.truthy). */
export function truthy(value: unknown): unknown {
  if (!value) return value;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') {
    const v = value as Record<PropertyKey, unknown>;
    if (v[Symbol.iterator]) {
      if ('length' in v && v.length === 0) return false;
      if ('size' in v && v.size === 0) return false;
    }
    if ((v.constructor as { name?: string }).name === 'Object') return Object.keys(v).length > 0;
  }
  return value;
}

/**
 * Subtrees without data access are evaluated once by json-logic-engine's interpreter at build time,
 * whose semantics differ from the compiled ones for some operators (cat skips nulls, comparisons
 * coerce differently): such subtrees are only accepted when made of operators that behave the same.
 */
const SAME_WHEN_CONSTANT = new Set(['if', 'and', 'or', '!', 'in']);
function constantSafe(logic: unknown): boolean {
  if (isPrimitive(logic)) return true;
  if (Array.isArray(logic)) return logic.every(constantSafe);
  const [op] = Object.keys(logic as object);
  return SAME_WHEN_CONSTANT.has(op!) && constantSafe((logic as Record<string, unknown>)[op!]);
}
function readsData(logic: unknown): boolean {
  if (logic === null || typeof logic !== 'object') return false;
  if (Array.isArray(logic)) return logic.some(readsData);
  const [op] = Object.keys(logic);
  if (op === 'var' || op === 'missing' || op === 'starts_with' || op === 'ends_with' || op === 'sem_ver' || op === 'fractional') return true;
  return readsData((logic as Record<string, unknown>)[op!]);
}

function compileNode(logic: unknown): Node {
  if (isPrimitive(logic)) return { value: logic };
  if (Array.isArray(logic)) {
    // A list of plain values (the operands of `in`, up to 1,000 per condition) is one constant.
    if (logic.every(isPrimitive)) return { value: Object.freeze(logic.slice()) };
    const items = logic.map(compileNode);
    if (items.every((i) => typeof i !== 'function')) return { value: Object.freeze(items.map((i) => (i as { value: unknown }).value)) };
    return (ctx, scope, memo) => items.map((i) => run(i, ctx, scope, memo));
  }
  if (typeof logic !== 'object') return unsupported();
  const keys = Object.keys(logic as object);
  if (keys.length !== 1) return unsupported();
  const op = keys[0]!;
  const args = (logic as Record<string, unknown>)[op];
  if (!readsData(logic) && !constantSafe(logic)) return unsupported();
  // `var` reads cost less than a memo; everything else that reads the context alone may be shared.
  if (sharing === undefined || op === 'var') return compileOperator(op, args);
  const text = sharedKey(logic);
  if (text === null) return compileOperator(op, args);
  const known = sharing.nodes.get(text);
  if (known) return known;
  const node = compileOperator(op, args);
  if (typeof node !== 'function' || sharing.full) return node;
  const shared = memoized(node);
  sharing.add(text, shared);
  return shared;
}

/** Longest key of a shared subtree: larger subtrees (rare, imported JSON Logic) are compiled unshared. */
const MAX_SHARED_KEY = 16 * 1024;
/** Keys of the subtrees of the logic being compiled, so that each is made once (null: not shareable). */
let keys: WeakMap<object, string | null> | undefined;

/**
 * The text that identifies a subtree's logic (its JSON, with -0 told from 0), or null when it may not be
 * shared: it reads `$flagd` (any string that starts with it), buckets (`fractional`), holds a number JSON
 * cannot spell, or is longer than MAX_SHARED_KEY.
 */
function sharedKey(v: unknown): string | null {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return v.startsWith('$flagd') ? null : JSON.stringify(v);
    case 'number':
      return !Number.isFinite(v) ? null : Object.is(v, -0) ? '-0' : String(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      break;
    default:
      return null;
  }
  keys ??= new WeakMap();
  const known = keys.get(v);
  if (known !== undefined) return known;
  let text: string | null;
  if (Array.isArray(v)) {
    // Past MAX_SHARED_KEY characters the subtree is not shared: stop there rather than build a key for
    // nothing (keys of nested subtrees would otherwise be copied into every ancestor's: 14 s for 100
    // rules of 50 conditions of 1,000 values, issue 29).
    const items: string[] = [];
    let length = 0;
    for (const item of v) {
      const key = sharedKey(item);
      if (key === null || (length += key.length + 1) > MAX_SHARED_KEY) break;
      items.push(key);
    }
    text = items.length === v.length ? `[${items.join(',')}]` : null;
  } else {
    const entries: string[] = [];
    let ok = true;
    let length = 0;
    for (const [k, item] of Object.entries(v)) {
      const key = k === 'fractional' || k.startsWith('$flagd') ? null : sharedKey(item);
      if (key === null || (length += key.length + k.length + 3) > MAX_SHARED_KEY) {
        ok = false;
        break;
      }
      entries.push(`${JSON.stringify(k)}:${key}`);
    }
    text = ok ? `{${entries.join(',')}}` : null;
  }
  if (text !== null && text.length > MAX_SHARED_KEY) text = null;
  keys.set(v, text);
  return text;
}

function compileOperator(op: string, args: unknown): Node {
  switch (op) {
    case 'var':
      return compileVar(args);
    case 'missing':
      return compileMissing(args);
    case 'if':
      return compileIf(args);
    case 'and':
    case 'or':
      return compileAndOr(op, args);
    case '!': {
      const inner = compileNode(Array.isArray(args) ? args[0] : args);
      return (ctx, scope, memo) => !truthy(run(inner, ctx, scope, memo));
    }
    case 'in': {
      if (!Array.isArray(args) || args.length !== 2 || unbracketed(args[1])) return unsupported();
      const item = compileNode(args[0]);
      const list = compileNode(args[1]);
      // Compiled as `(list || []).includes(item)`: a string list is a substring test, anything else throws.
      return (ctx, scope, memo) => {
        const l = (run(list, ctx, scope, memo) || []) as { includes(x: unknown): boolean };
        return l.includes(run(item, ctx, scope, memo));
      };
    }
    case '===':
    case '!==':
    case '==':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
      return compileComparison(op, args);
    case 'cat': {
      if (!Array.isArray(args) || args.some(unbracketed)) return unsupported();
      const parts = args.map(compileNode);
      // Compiled as `'' + a + b ...` (null is "null").
      return (ctx, scope, memo) => {
        let out = '';
        for (const p of parts) out += run(p, ctx, scope, memo) as string;
        return out;
      };
    }
    case 'starts_with':
    case 'ends_with': {
      if (!Array.isArray(args)) return unsupported();
      const parts = args.map(compileNode);
      const starts = op === 'starts_with';
      return (ctx, scope, memo) => {
        if (parts.length !== 2) return null;
        const a = run(parts[0]!, ctx, scope, memo);
        const b = run(parts[1]!, ctx, scope, memo);
        if (typeof a !== 'string' || typeof b !== 'string') return null;
        return starts ? a.startsWith(b) : a.endsWith(b);
      };
    }
    case 'sem_ver':
      return compileSemVer(args);
    case 'fractional':
      return compileFractional(args);
    default:
      return unsupported();
  }
}

/**
 * json-logic-engine compiles `and`, `or` and `missing` to conditional expressions without brackets,
 * so inside `cat` (`'' + a + b`) or as the list of `in` (`(list || [])`) the surrounding operator
 * binds to part of them: what that computes is not reproduced, such logic is left to flagd-core.
 */
function unbracketed(logic: unknown): boolean {
  if (logic === null || typeof logic !== 'object' || Array.isArray(logic)) return false;
  const [op] = Object.keys(logic);
  return op === 'and' || op === 'or' || op === 'missing';
}

function splitPath(path: unknown): string[] {
  // json-logic-engine unescapes backslashes in paths: not reproduced, so not accepted.
  if (typeof path !== 'string' || path === '' || path.includes('\\')) return unsupported();
  return path.split('.');
}

function compileVar(args: unknown): Node {
  // `{"var": [path]}` and `{"var": [path, default]}` with a literal default; the default replaces null and undefined.
  if (Array.isArray(args)) {
    if (args.length === 0 || args.length > 2 || (args.length === 2 && !isPrimitive(args[1]))) return unsupported();
    const read = compileVar(args[0]) as Program;
    const fallback = args.length === 2 ? args[1] : null;
    if (fallback === null) return read;
    return (ctx, scope, memo) => read(ctx, scope, memo) ?? fallback;
  }
  const parts = splitPath(args);
  if (parts[0] === '$flagd') {
    // flagd-core sets `$flagd` to { flagKey, timestamp } on a copy of the context; read them instead.
    if (parts.length !== 2) return unsupported();
    if (parts[1] === 'flagKey') return (_ctx, scope) => scope.key;
    if (parts[1] === 'timestamp') return () => Math.floor(Date.now() / 1000);
    return unsupported();
  }
  // Compiled as `context?.[a]?.[b] ?? null`, functions read as null.
  if (parts.length === 1) {
    const [p] = parts as [string];
    return (ctx) => {
      const v = ctx[p] ?? null;
      return typeof v === 'function' ? null : v;
    };
  }
  return (ctx) => {
    let v: unknown = ctx;
    for (const p of parts) {
      if (v === null || v === undefined) return null;
      v = (v as Record<string, unknown>)[p];
    }
    v ??= null;
    return typeof v === 'function' ? null : v;
  };
}

function compileMissing(args: unknown): Node {
  if (!Array.isArray(args)) return unsupported();
  const paths = args.map(splitPath);
  if (paths.some((p) => p[0] === '$flagd')) return unsupported();
  return (ctx) => {
    const missing: unknown[] = [];
    paths.forEach((path, i) => {
      let data: unknown = ctx;
      for (const p of path) {
        if (!data) return missing.push(args[i]);
        data = (data as Record<string, unknown>)[p];
        if (data === undefined) return missing.push(args[i]);
      }
    });
    return missing;
  };
}

function compileIf(args: unknown): Node {
  if (!Array.isArray(args) || args.length < 3) return unsupported();
  const items = args.map(compileNode);
  if (items.length % 2 !== 1) items.push({ value: null });
  const otherwise = items[items.length - 1]!;
  return (ctx, scope, memo) => {
    for (let i = 0; i < items.length - 1; i += 2) if (truthy(run(items[i]!, ctx, scope, memo))) return run(items[i + 1]!, ctx, scope, memo);
    return run(otherwise, ctx, scope, memo);
  };
}

function compileAndOr(op: 'and' | 'or', args: unknown): Node {
  if (!Array.isArray(args)) return unsupported();
  if (args.length === 0) return { value: null };
  const items = args.map(compileNode);
  const and = op === 'and';
  return (ctx, scope, memo) => {
    let item: unknown;
    for (const n of items) {
      item = run(n, ctx, scope, memo);
      if (and ? !truthy(item) : truthy(item)) return item;
    }
    return item;
  };
}

class NotANumber {}

/** json-logic-engine's precoerceNumber (throws NaN, here an object: either way an evaluation error). */
function precoerceNumber(item: unknown): unknown {
  if (Number.isNaN(item)) throw new NotANumber();
  if (!item) return item;
  if (typeof item === 'object') throw new NotANumber();
  return item;
}

/** json-logic-engine's compareCheck: the right operand as the compiled comparison uses it. */
function compareCheck(item: unknown, prev: unknown, strict: boolean): unknown {
  if (strict || ((typeof item === 'string' || item === null) && (typeof prev === 'string' || prev === null))) return item;
  if (Number.isNaN(+(precoerceNumber(item) as number)) && prev !== null) throw new NotANumber();
  if (Number.isNaN(+(precoerceNumber(prev) as number))) throw new NotANumber();
  if (prev === null && !item) return null;
  if (item === null && !prev) return 0;
  return item;
}

const isVarNode = (logic: unknown) => logic !== null && typeof logic === 'object' && !Array.isArray(logic) && Object.keys(logic).length === 1 && 'var' in logic;

// JavaScript's own comparisons, coercions included (what the compiled JSON Logic runs).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;
const COMPARE: Record<string, (a: Loose, b: Loose) => boolean> = {
  '===': (a, b) => a === b,
  '!==': (a, b) => a !== b,
  '==': (a, b) => a == b,
  '!=': (a, b) => a != b,
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
};

function compileComparison(op: string, args: unknown): Node {
  if (!Array.isArray(args) || args.length !== 2) return unsupported();
  const strict = op.length === 3;
  // The compiled form is `(prev = left) op compareCheck(right, prev)`, and a `var` on the right
  // assigns `prev` itself (to its value: contexts hold no functions) before compareCheck reads it.
  // Literal and `var` right operands are reproduced; others are left to flagd-core.
  const rightIsVar = isVarNode(args[1]);
  if (!strict && !isPrimitive(args[1]) && !rightIsVar) return unsupported();
  const left = compileNode(args[0]);
  const right = compileNode(args[1]);
  const compare = COMPARE[op]!;
  return (ctx, scope, memo) => {
    const a = run(left, ctx, scope, memo);
    const b = run(right, ctx, scope, memo);
    return compare(a, compareCheck(b, rightIsVar ? b : a, strict));
  };
}

const versions = new Map<string, SemVerLike | null>();

/** flagd-core's normalizeVersion (v/V prefix stripped, "1" and "1.2" coerced), cached by text. */
export function normalizeVersion(raw: unknown): SemVerLike | null {
  const text = String(raw);
  let parsed = versions.get(text);
  if (parsed === undefined) {
    const str = text.replace(/^[vV]/, '');
    parsed = semver.parse(str) ?? (/^\d+(\.\d+)?$/.test(str) ? semver.coerce(str) : null);
    if (versions.size >= 10_000) versions.clear();
    versions.set(text, parsed);
  }
  return parsed;
}

function compileSemVer(args: unknown): Node {
  if (!Array.isArray(args)) return unsupported();
  const parts = args.map(compileNode);
  if (parts.length !== 3) return () => null;
  const [left, op, right] = parts as [Node, Node, Node];
  // Constant operators and versions (what Flagpost emits) are read once.
  const fixedOperator = typeof op === 'function' ? undefined : String(op.value);
  const fixedVersion = typeof right === 'function' ? undefined : normalizeVersion(right.value);
  return (ctx, scope, memo) => {
    const a = normalizeVersion(run(left, ctx, scope, memo));
    const operator = fixedOperator ?? String(run(op, ctx, scope, memo));
    const b = fixedVersion === undefined ? normalizeVersion(run(right, ctx, scope, memo)) : fixedVersion;
    if (!a || !b) return null;
    return semverHolds(a, operator, b);
  };
}

function semverHolds(a: SemVerLike, operator: string, b: SemVerLike): boolean | null {
  const result = semver.compare(a, b);
  switch (operator) {
    case '=':
      return result === 0;
    case '!=':
      return result !== 0;
    case '<':
      return result < 0;
    case '<=':
      return result <= 0;
    case '>=':
      return result >= 0;
    case '>':
      return result > 0;
    case '^':
      return a.major === b.major;
    case '~':
      return a.major === b.major && a.minor === b.minor;
  }
  return null;
}

const MAX_WEIGHT = 2147483647;

/** flagd-core's bucket: floor(hash * total / 2^32), exact in a double while the product stays below 2^53. */
export function bucketOf(hash: number, total: number): number {
  if (total <= 2 ** 21) return Math.floor((hash * total) / 4294967296);
  return Number((BigInt(hash) * BigInt(total)) >> 32n);
}

interface Buckets {
  variants: unknown[];
  weights: number[];
  total: number;
}

/** flagd-core's toBucketingList; undefined where it throws (an invalid configuration: null). */
function bucketsOf(from: unknown[]): Buckets | undefined {
  const out: Buckets = { variants: [], weights: [], total: 0 };
  for (const entry of from) {
    if (!Array.isArray(entry) || entry.length === 0 || entry.length > 2) return undefined;
    const v: unknown = entry[0];
    let variant: unknown;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') variant = v;
    else if (v === null || v === undefined) variant = null;
    else return undefined;
    let weight = 1;
    if (entry.length >= 2) {
      const raw: unknown = entry[1];
      if (typeof raw !== 'number' || !Number.isInteger(raw)) return undefined;
      weight = Math.max(0, raw);
    }
    out.variants.push(variant);
    out.weights.push(weight);
    out.total += weight;
  }
  return out;
}

function compileFractional(args: unknown): Node {
  if (!Array.isArray(args)) return unsupported();
  const parts = args.map(compileNode);
  if (parts.length < 1) return () => null;
  // Constant bucket lists (what Flagpost emits) are checked once, and not evaluated per call (they cannot throw).
  if (parts.every((p, i) => i === 0 || typeof p !== 'function')) return compileFixedFractional(parts);
  const values = (ctx: Record<string, unknown>, scope: LogicScope, memo: Memo | undefined) => parts.map((p) => run(p, ctx, scope, memo));
  return (ctx, scope, memo) => {
    const data = values(ctx, scope, memo);
    let bucketBy: string;
    let from: unknown[];
    if (typeof data[0] === 'string') {
      bucketBy = data[0];
      from = data.slice(1);
    } else {
      const targetingKey = ctx.targetingKey;
      if (!targetingKey) return null;
      bucketBy = `${scope.key}${targetingKey as string}`;
      from = data;
    }
    return pickBucket(bucketBy, bucketsOf(from));
  };
}

/** `fractional` whose arguments after the first are constants. */
function compileFixedFractional(parts: Node[]): Program {
  const [head, ...rest] = parts as [Node, ...Array<{ value: unknown }>];
  const restValues = rest.map((p) => p.value);
  // With a bucket key (a string first argument) the rest are the buckets; without one, every argument is.
  const keyed = bucketsOf(restValues);
  const unkeyed = typeof head === 'function' ? undefined : bucketsOf([head.value, ...restValues]);
  return (ctx, scope, memo) => {
    const first = run(head, ctx, scope, memo);
    if (typeof first === 'string') return pickBucket(first, keyed);
    const targetingKey = ctx.targetingKey;
    if (!targetingKey) return null;
    return pickBucket(`${scope.key}${targetingKey as string}`, typeof head === 'function' ? bucketsOf([first, ...restValues]) : unkeyed);
  };
}

function pickBucket(bucketBy: string, buckets: Buckets | undefined): unknown {
  if (!buckets || buckets.total > MAX_WEIGHT) return null;
  const bucket = bucketOf(MurmurHash3(bucketBy).result() >>> 0, buckets.total);
  let sum = 0;
  for (let i = 0; i < buckets.weights.length; i++) {
    sum += buckets.weights[i]!;
    if (sum > bucket) return buckets.variants[i];
  }
  return null;
}
