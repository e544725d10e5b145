import type { EvaluationContext, FlagValue } from '@openfeature/core';
import { FeatureFlag } from '@openfeature/flagd-core';
import { buildIndex, encodedDefault, encodedVariants, extensionConditions, targetingLogic, type EnvironmentIndex } from './compile.ts';
import { compileExtension, EXTENSION_KEY, extensionName, type ExtensionTest } from './conditions.ts';
import { extensionWorkProblem, logicCost, operandsProblem } from './cost.ts';
import { MAX_LOGIC_COST } from './limits.ts';
import { prepareContext, type PrepareOptions } from './context.ts';
import { compileLogic, type Memo, type Program, SharedLogic } from './logic.ts';
import type { Condition, Evaluation, Reason, Segment, TargetedFlag, VariantValue } from './targeting.ts';

// The compiled, immutable snapshot of one environment's flags. Every targeted flag's JSON Logic is
// evaluated with flagd-core's semantics: by Flagpost's own closures (logic.ts) when they reproduce all
// of it — everything compile.ts emits — else by flagd-core's own FeatureFlag (the class FlagdCore
// stores). Both are built lazily on first evaluation and carried over from the previous snapshot when a
// flag's inputs did not change (docs/adr/0024, 0028). A compiled flag answers each of its outcomes
// (a rule's variant, the default, no value) with one frozen Evaluation made once, so that evaluating
// allocates nothing per flag and callers may key caches on the evaluation's identity.

export interface CompileOptions {
  /** Clock for extension conditions that compare with `now` (ms since the epoch). */
  now?: () => number;
  /** The snapshot being replaced: flags whose inputs are unchanged reuse its compiled forms. */
  previous?: CompiledEnvironment;
}

export interface CompiledEnvironment {
  /** Flag keys, in the order given. */
  readonly keys: readonly string[];
  /** One flag for one context; undefined when the key is unknown. Never throws. */
  evaluate(key: string, context: unknown, options?: PrepareOptions): Evaluation | undefined;
  /**
   * Every flag for one context, with flagd's bulk semantics: DISABLED flags and flags that answer no
   * value (errors, no variant served) are left out; so, with an invalid context, are all targeted
   * flags (check prepareContext first to answer INVALID_CONTEXT instead). Never throws.
   */
  evaluateAll(context: unknown): Evaluation[];
  /** True when the flag's answer does not depend on the context (STATIC, DISABLED, or no value). */
  isStatic(key: string): boolean;
  /**
   * The context checked and copied once (prepareContext) for evaluating several flags, or the problem
   * that makes every targeted flag answer INVALID_CONTEXT. Never throws.
   */
  prepare(context: unknown, options?: PrepareOptions): PreparedEvaluation;
  /**
   * An object that stays the same from one snapshot to the next as long as the flag's compiled form is
   * carried over (same flag, same segments and prerequisites it uses); undefined for an unknown key.
   * Whatever is derived from a flag's evaluations may be kept as long as this is unchanged.
   */
  compiledOf(key: string): object | undefined;
}

/** A context ready for evaluating flags of one environment (CompiledEnvironment.prepare). */
export type PreparedEvaluation =
  { readonly problem: string; evaluate?: undefined } | { readonly problem?: undefined; evaluate(key: string): Evaluation | undefined };

const silent = { error() {}, warn() {}, info() {}, debug() {} };
type Metadata = Record<string, string | number | boolean>;

/** One flag, compiled. Shared between snapshots when its inputs are unchanged (see compileEnvironment). */
interface FlagRecord {
  readonly key: string;
  /** The inputs it was compiled from, kept to recognise them (by identity, else by content) on the next rebuild. */
  readonly source: TargetedFlag;
  readonly deps: ReadonlyArray<Segment | TargetedFlag | undefined>;
  /** The answer of a flag that does not read the context. */
  readonly fixed?: Evaluation;
  /** The error a flag past the evaluation budget answers instead of running (budgetProblem). */
  readonly refused?: Evaluation;
  readonly logic?: unknown;
  readonly variants: Record<string, VariantValue>;
  readonly defaultVariant: string | null;
  readonly metadata: Metadata;
  /** Encoded variant name -> what to answer; undefined for imported JSON Logic (names as they are). */
  readonly decode?: ReadonlyMap<string, Evaluation>;
  /** The answer when no variant is served. */
  readonly noValue: Evaluation;
  /** The answers of imported JSON Logic by reason and variant, made on first use. */
  readonly answers: Map<string, Evaluation>;
  readonly extensions: ReadonlyArray<readonly [string, ExtensionTest]>;
  /** The logic as closures (logic.ts); null when it needs flagd-core (see compileLogic). Built on first use. */
  program?: Program | null;
  /** The variants by name, as flagd-core holds them. */
  variantMap?: ReadonlyMap<string, VariantValue>;
  flagd?: FeatureFlag;
}

/**
 * Compiles an environment's flags and segments (already validated: validate.ts) into an immutable
 * snapshot that evaluates them. Pass `previous` on a rebuild so unchanged flags are not recompiled:
 * a flag given as the same object as last time (with the same segment and prerequisite objects) is
 * reused at once, any other flag whose content is unchanged after a comparison of its JSON. Inputs are
 * treated as immutable: do not mutate them after compiling.
 */
export function compileEnvironment(flags: readonly TargetedFlag[], segments: readonly Segment[], options: CompileOptions = {}): CompiledEnvironment {
  const now = options.now ?? Date.now;
  const env = buildIndex(flags, segments);
  const previous = options.previous instanceof Environment ? options.previous.records : undefined;
  const records = new Map<string, FlagRecord>();
  for (const flag of flags) {
    const deps = dependenciesOf(flag, env);
    const old = previous?.get(flag.key);
    // Same objects as last time: nothing to compare. Otherwise compare contents (a store may rebuild every object).
    if (old && old.source === flag && (sameObjects(old.deps, deps) || sameDeps(old.deps, deps))) records.set(flag.key, old);
    else if (old && sameJson(old.source, flag) && sameDeps(old.deps, deps)) records.set(flag.key, { ...old, source: flag, deps });
    else records.set(flag.key, compileFlag(flag, env, deps));
  }
  // Subtrees compiled for the last snapshot stay shareable: its unchanged flags keep their programs,
  // and a flag compiled now shares with them. The table is started again once it is full.
  const shared = options.previous instanceof Environment && !options.previous.shared.full ? options.previous.shared : new SharedLogic();
  return new Environment(records, now, shared);
}

/** The segments and prerequisite flags (transitively) a flag's compiled form depends on, in a fixed order. */
function dependenciesOf(flag: TargetedFlag, env: EnvironmentIndex): Array<Segment | TargetedFlag | undefined> {
  const deps: Array<Segment | TargetedFlag | undefined> = [];
  const seen = new Set([flag.key]);
  const visit = (f: TargetedFlag) => {
    for (const rule of f.targeting.rules) for (const key of rule.segments) deps.push(env.segments.get(key));
    if (f.targeting.jsonLogic !== undefined) deps.push(...env.segments.values());
    for (const p of f.targeting.prerequisites) {
      const target = env.flags.get(p.flag);
      if (!target || seen.has(p.flag)) continue;
      seen.add(p.flag);
      deps.push(target);
      visit(target);
    }
  };
  visit(flag);
  return deps;
}

const sameObjects = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((x, i) => x === b[i]);
const sameDeps = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((x, i) => sameJson(x, b[i]));

/**
 * True when two JSON values are alike, keys in the same order (so their JSON texts are equal): what
 * a flag compiles to depends on nothing else. Walks both at once and stops at the first difference,
 * without serializing either (a rebuild compares every flag of the environment).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

function compileFlag(flag: TargetedFlag, env: EnvironmentIndex, deps: FlagRecord['deps']): FlagRecord {
  const t = flag.targeting;
  const metadata: Metadata = Object.freeze({ ...(t.metadata ?? {}) });
  const noValue: Evaluation = Object.freeze({ key: flag.key, reason: 'DEFAULT', metadata });
  const base = {
    key: flag.key,
    source: flag,
    deps,
    metadata,
    variants: t.variants,
    defaultVariant: t.defaultVariant,
    extensions: [],
    noValue,
    answers: new Map(),
  };
  if (t.state === 'DISABLED') return { ...base, fixed: Object.freeze({ key: flag.key, reason: 'DISABLED', metadata }) };
  // Counted before anything is built: building and compiling the logic cost time in proportion to its
  // operands (prerequisites and segments inlined at every use), so a flag past the limit never is.
  const operands = operandsProblem(flag, env);
  if (operands) {
    const errorDetails = `the flag needs more work than compiling one flag allows: ${operands}`;
    return { ...base, refused: Object.freeze({ key: flag.key, reason: 'ERROR', errorCode: 'GENERAL', errorDetails, metadata }) };
  }
  const typed = t.jsonLogic === undefined;
  const logic = targetingLogic(flag, env, { encode: typed, refSegments: false });
  if (logic === undefined) {
    // flagd: no targeting answers the default variant as STATIC, or no value (DEFAULT) without one.
    const value = t.defaultVariant === null ? undefined : t.variants[t.defaultVariant];
    const fixed: Evaluation =
      value === undefined ? { key: flag.key, reason: 'DEFAULT', metadata } : { key: flag.key, value, variant: t.defaultVariant!, reason: 'STATIC', metadata };
    return { ...base, fixed: Object.freeze(fixed) };
  }
  const conditions = extensionConditions(flag, env);
  const over = budgetProblem(flag, conditions);
  if (over) return { ...base, logic, refused: Object.freeze({ key: flag.key, reason: 'ERROR', errorCode: 'GENERAL', errorDetails: over, metadata }) };
  const extensions = new Map<string, ExtensionTest>();
  for (const c of conditions) {
    const name = extensionName(c);
    if (!extensions.has(name)) extensions.set(name, compileExtension(c));
  }
  return {
    ...base,
    logic,
    variants: typed ? encodedVariants(flag) : t.variants,
    defaultVariant: typed && t.defaultVariant !== null ? encodedDefault(t.defaultVariant) : t.defaultVariant,
    decode: typed ? decodeTable(flag, metadata) : undefined,
    extensions: [...extensions],
  };
}

/**
 * Why a flag may cost more to evaluate than one evaluation may (cost.ts, limits.ts), or undefined.
 * Validation refuses such targeting; this catches what was stored before the limits (issue 29) or
 * what a segment edit took past them: the flag answers GENERAL at once instead of running.
 */
function budgetProblem(flag: TargetedFlag, conditions: readonly Condition[]): string | undefined {
  const work = extensionWorkProblem(conditions, "the flag's");
  if (work) return `the flag needs more work than one evaluation allows: ${work}`;
  if (flag.targeting.jsonLogic === undefined) return undefined;
  const bound = logicCost(flag.targeting.jsonLogic);
  if ('message' in bound) return `the flag's JSON Logic has no cost bound: ${bound.message}`;
  if (bound.cost > MAX_LOGIC_COST)
    return `the flag's JSON Logic may need more operations (${Math.round(bound.cost)}) than one evaluation allows (${MAX_LOGIC_COST})`;
  return undefined;
}

function decodeTable(flag: TargetedFlag, flagMetadata: Metadata): Map<string, Evaluation> {
  const t = flag.targeting;
  const table = new Map<string, Evaluation>();
  const key = flag.key;
  if (t.defaultVariant !== null && t.variants[t.defaultVariant] !== undefined) {
    const evaluation: Evaluation = { key, value: t.variants[t.defaultVariant]!, variant: t.defaultVariant, reason: 'DEFAULT', metadata: flagMetadata };
    table.set(encodedDefault(t.defaultVariant), Object.freeze(evaluation));
  }
  t.rules.forEach((rule, index) => {
    if (!rule.enabled) return;
    const metadata: Metadata = { ...flagMetadata, ruleId: rule.id, ruleName: rule.name };
    // The rule a release owns (issue 33) names its release: `release-<releaseId>`.
    if (rule.id.startsWith('release-')) metadata.releaseId = rule.id.slice('release-'.length);
    if (rule.segments.length > 0) metadata.segments = rule.segments.join(',');
    const split = 'split' in rule.serve;
    if (split) metadata.bucketing = (rule.serve as { split: { bucketing: string } }).split.bucketing;
    Object.freeze(metadata);
    const served = 'variant' in rule.serve ? [rule.serve.variant] : rule.serve.split.weights.map((w) => w.variant);
    for (const v of served) {
      const value = t.variants[v];
      if (value !== undefined) table.set(`r${index}:${v}`, Object.freeze({ key, value, variant: v, reason: split ? 'SPLIT' : 'TARGETING_MATCH', metadata }));
    }
  });
  return table;
}

class Environment implements CompiledEnvironment {
  readonly keys: readonly string[];

  constructor(
    readonly records: ReadonlyMap<string, FlagRecord>,
    private readonly now: () => number,
    /** The subtrees the flags compiled in this snapshot (and the last ones) have in common (logic.ts SharedLogic). */
    readonly shared: SharedLogic,
  ) {
    this.keys = Object.freeze([...records.keys()]);
  }

  isStatic(key: string): boolean {
    return this.records.get(key)?.fixed !== undefined;
  }

  compiledOf(key: string): object | undefined {
    return this.records.get(key);
  }

  prepare(context: unknown, options?: PrepareOptions): PreparedEvaluation {
    const prepared = prepareContext(context, options);
    if (prepared.problem !== undefined) return { problem: prepared.problem };
    return new Prepared(this, prepared.context);
  }

  evaluate(key: string, context: unknown, options?: PrepareOptions): Evaluation | undefined {
    const record = this.records.get(key);
    if (!record) return undefined;
    if (record.fixed) return record.fixed;
    const prepared = prepareContext(context, options);
    if (prepared.problem !== undefined) return invalidContext(record, prepared.problem);
    return this.run(record, withExtensions(prepared.context, record.extensions, this.now()), {});
  }

  evaluateAll(context: unknown): Evaluation[] {
    const prepared = prepareContext(context);
    const out: Evaluation[] = [];
    let shared: Record<string, unknown> | undefined;
    const memo: Memo = {};
    for (const record of this.records.values()) {
      let answer: Evaluation;
      if (record.fixed) answer = record.fixed;
      else if (prepared.problem !== undefined) continue;
      else {
        shared ??= this.contextFor(prepared.context);
        answer = this.run(record, shared, memo);
      }
      if (answer.value !== undefined && answer.reason !== 'DISABLED') out.push(answer);
    }
    return out;
  }

  private extensionsOfAll?: Array<readonly [string, ExtensionTest]>;

  /** The prepared context with the results of every flag's extension conditions, for evaluating several flags. */
  contextFor(context: Record<string, unknown>): Record<string, unknown> {
    return withExtensions(context, this.allExtensions(), this.now());
  }

  private allExtensions(): ReadonlyArray<readonly [string, ExtensionTest]> {
    if (!this.extensionsOfAll) {
      const all = new Map<string, ExtensionTest>();
      for (const r of this.records.values()) for (const [name, test] of r.extensions) all.set(name, test);
      this.extensionsOfAll = [...all];
    }
    return this.extensionsOfAll;
  }

  /** One flag for a context (with its extension results); `memo` is the same for every flag evaluated for that context. */
  run(record: FlagRecord, context: Record<string, unknown>, memo: Memo): Evaluation {
    if (record.refused) return record.refused;
    if (record.program === undefined) record.program = programOf(record, this.shared);
    const program = record.program;
    if (program && record.decode) {
      // Flagpost's own rules: the (encoded) variant the program serves names the answer (decodeTable),
      // which is what answer() finds through resolutionOf for every variant the table holds.
      let result: unknown;
      try {
        result = program(context, record, memo);
      } catch {
        return this.answer(record, programError(record));
      }
      const none = result === null || result === undefined;
      const variant = typeof result === 'string' ? result : none ? record.defaultVariant || undefined : undefined;
      if (variant !== undefined) {
        const decoded = record.decode.get(variant);
        if (decoded) return decoded;
      } else if (none) return record.noValue;
      return this.answer(record, resolutionOf(record, result));
    }
    const r = program ? evaluateProgram(record, program, context, memo) : this.runFlagd(record, context);
    if (r === undefined)
      return { key: record.key, reason: 'ERROR', errorCode: 'GENERAL', errorDetails: 'the flag could not be evaluated', metadata: record.metadata };
    return this.answer(record, r);
  }

  private runFlagd(record: FlagRecord, context: Record<string, unknown>): Resolution | undefined {
    try {
      record.flagd ??= new FeatureFlag(
        record.key,
        {
          state: 'ENABLED',
          variants: record.variants as Record<string, FlagValue>,
          defaultVariant: record.defaultVariant as string,
          targeting: record.logic as string,
        },
        silent,
      );
      return record.flagd.evaluate(context as EvaluationContext, silent) as Resolution;
    } catch {
      return undefined;
    }
  }

  private answer(record: FlagRecord, r: Resolution): Evaluation {
    if (r.reason === 'ERROR') {
      const errorCode = r.errorCode === 'PARSE_ERROR' ? 'PARSE_ERROR' : 'GENERAL';
      return { key: record.key, reason: 'ERROR', errorCode, errorDetails: r.errorMessage, metadata: record.metadata };
    }
    if (r.variant === undefined || r.value === undefined) return record.noValue;
    if (!record.decode) {
      const reason = (r.reason === 'STATIC' || r.reason === 'DEFAULT' ? r.reason : 'TARGETING_MATCH') as Reason;
      // The value follows from the variant (flagd-core takes it from the flag's variants).
      const id = `${reason}\n${r.variant}`;
      let known = record.answers.get(id);
      if (!known) {
        known = Object.freeze({ key: record.key, value: r.value as VariantValue, variant: r.variant, reason, metadata: record.metadata });
        if (record.answers.size < MAX_ANSWERS) record.answers.set(id, known);
      }
      return known;
    }
    const decoded = record.decode.get(r.variant);
    if (!decoded)
      return { key: record.key, reason: 'ERROR', errorCode: 'GENERAL', errorDetails: `variant '${r.variant}' not found`, metadata: record.metadata };
    return decoded;
  }
}

/**
 * A context prepared for one environment: its flags evaluated for it share one memo, so that what they
 * have in common (segments, conditions) is evaluated once for this context.
 */
class Prepared {
  private shared: Record<string, unknown> | undefined;
  private readonly memo: Memo = {};

  constructor(
    private readonly env: Environment,
    private readonly context: Record<string, unknown>,
  ) {}

  evaluate(key: string): Evaluation | undefined {
    const record = this.env.records.get(key);
    if (!record) return undefined;
    if (record.fixed) return record.fixed;
    this.shared ??= this.env.contextFor(this.context);
    return this.env.run(record, this.shared, this.memo);
  }
}

/** Answers remembered per flag of imported JSON Logic: variants times reasons, bounded should a flag have more. */
const MAX_ANSWERS = 1024;

/** What flagd-core's FeatureFlag.evaluate answers (the fields read here). */
interface Resolution {
  reason: string;
  variant?: string;
  value?: unknown;
  errorCode?: string;
  errorMessage?: string;
}

/** The flag's logic as closures when logic.ts reproduces all of it; null to evaluate it with flagd-core. */
function programOf(record: FlagRecord, shared: SharedLogic): Program | null {
  const logic = record.logic;
  // flagd-core refuses a default variant missing from the variants when it builds the flag: leave that to it.
  if (record.defaultVariant && !Object.prototype.hasOwnProperty.call(record.variants, record.defaultVariant)) return null;
  if (logic === null || typeof logic !== 'object' || Array.isArray(logic) || Object.keys(logic).length !== 1) return null;
  let program: Program | undefined;
  try {
    program = compileLogic(logic, shared);
  } catch {
    program = undefined; // never expected; flagd-core then answers, as for logic outside the subset
  }
  if (!program) return null;
  record.variantMap = new Map(Object.entries(record.variants));
  return program;
}

/** FeatureFlag.evaluate of flagd-core with the targeting evaluated by a compiled program. */
function evaluateProgram(record: FlagRecord, program: Program, context: Record<string, unknown>, memo: Memo): Resolution {
  let result: unknown;
  try {
    result = program(context, record, memo);
  } catch {
    return programError(record);
  }
  return resolutionOf(record, result);
}

function programError(record: FlagRecord): Resolution {
  return { reason: 'ERROR', errorCode: 'GENERAL', errorMessage: `Error evaluating targeting rule for flag '${record.key}'` };
}

/** What flagd-core makes of what the targeting answered. */
function resolutionOf(record: FlagRecord, result: unknown): Resolution {
  let variant: string | undefined;
  let reason: string;
  if (result === null || result === undefined) {
    variant = record.defaultVariant || undefined;
    reason = 'DEFAULT';
  } else {
    try {
      variant = (result as { toString(): string }).toString();
    } catch {
      return programError(record);
    }
    reason = 'TARGETING_MATCH';
  }
  if (variant === undefined) return { reason: 'DEFAULT' };
  const value = record.variantMap!.get(variant);
  if (value === undefined) return { reason: 'ERROR', errorCode: 'GENERAL', errorMessage: `Variant '${variant}' not found in flag with key '${record.key}'` };
  return { reason, variant, value };
}

function withExtensions(context: Record<string, unknown>, extensions: ReadonlyArray<readonly [string, ExtensionTest]>, nowMs: number): Record<string, unknown> {
  if (extensions.length === 0) return context;
  const results: Record<string, boolean> = {};
  for (const [name, test] of extensions) results[name] = test(context, nowMs);
  return { ...context, [EXTENSION_KEY]: results };
}

function invalidContext(record: FlagRecord, problem: string): Evaluation {
  return { key: record.key, reason: 'ERROR', errorCode: 'INVALID_CONTEXT', errorDetails: problem, metadata: record.metadata };
}
