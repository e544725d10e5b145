import { buildIndex, segmentLogic, targetingLogic } from './compile.ts';
import { META_NOTE, META_PORTABLE, META_TARGETING, type EmbeddedTargeting } from './flagd-export.ts';
import { operation, readRules, readSegment } from './read-back.ts';
import type { FlagTargeting, FlagType, Segment, TargetedFlag, Variants } from './targeting.ts';
import { jsonLogicProblem as logicProblem } from './json-logic.ts';
import { drain, type Steps } from './slices.ts';
import { environmentSteps, SEGMENT_KEY } from './validate.ts';

// A flagd flag definition read into the typed model. Whatever flagd accepts is accepted (flags as a
// map or, as the flagd daemon allows, an array; `$evaluators`; flag-set metadata); what flagd refuses
// by its schema is a problem naming the flag and the JSON path. Targeting becomes typed rules when it
// has the shape Flagpost's compiler emits (checked by compiling the reading again: the same JSON Logic
// or no reading), or when the flag carries the typed targeting Flagpost's export embeds; anything else
// is kept as JSON Logic, with `$ref`s to evaluators that are not segments inlined. Evaluators shaped
// like compiled segments become segments (named after their key).

export interface ImportProblem {
  flagKey?: string;
  path: string;
  message: string;
}

export type ImportResult =
  { flags: TargetedFlag[]; segments: Segment[]; problem?: undefined } | { problem: ImportProblem; flags?: undefined; segments?: undefined };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const fail = (path: string, message: string, flagKey?: string): ImportResult => ({ problem: { flagKey, path, message } });
const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The flag type of a set of variant values, or undefined when they are mixed (or arrays, or null). */
export function inferFlagType(variants: Variants | Record<string, unknown>): FlagType | undefined {
  const values = Object.values(variants);
  const kind = (v: unknown): FlagType | undefined =>
    typeof v === 'boolean' ? 'boolean' : typeof v === 'string' ? 'string' : typeof v === 'number' ? 'number' : isObject(v) ? 'object' : undefined;
  const first = kind(values[0]);
  return first !== undefined && values.every((v) => kind(v) === first) ? first : undefined;
}

/** Replaces `{"$ref": key}` of evaluators that are not segments with their logic; others stay. */
function inlineEvaluators(logic: unknown, evaluators: Map<string, unknown>, depth = 0): unknown {
  if (Array.isArray(logic)) return logic.map((item) => inlineEvaluators(item, evaluators, depth));
  if (!isObject(logic)) return logic;
  const op = operation(logic);
  if (op && op[0] === '$ref' && typeof op[1] === 'string' && evaluators.has(op[1]) && depth < 16) {
    return inlineEvaluators(evaluators.get(op[1]), evaluators, depth + 1);
  }
  return Object.fromEntries(Object.entries(logic).map(([k, v]) => [k, inlineEvaluators(v, evaluators, depth)]));
}

/**
 * Reads a flagd flag definition (the parsed JSON) into flags and segments, or names the first
 * problem (flag key and JSON path into the document). Never throws.
 */
export function parseFlagdDefinition(doc: unknown): ImportResult {
  return drain(parseSteps(doc));
}

/** parseFlagdDefinition in steps, one per flag (slices.ts runs them between turns of the event loop: a large import). */
export function* parseSteps(doc: unknown): Steps<ImportResult> {
  if (!isObject(doc)) return fail('', 'a flagd definition is a JSON object');
  let entries: Array<[string, unknown, string]>;
  if (isObject(doc.flags)) entries = Object.entries(doc.flags).map(([k, v]) => [k, v, `/flags/${escape(k)}`]);
  else if (Array.isArray(doc.flags)) {
    entries = [];
    const seen = new Set<string>();
    for (const [i, f] of doc.flags.entries()) {
      if (!isObject(f) || typeof f.key !== 'string' || f.key.length === 0) return fail(`/flags/${i}/key`, 'a flag in a list needs a key');
      if (seen.has(f.key)) return fail(`/flags/${i}/key`, `duplicate flag key ${f.key}`, f.key);
      seen.add(f.key);
      entries.push([f.key, f, `/flags/${i}`]);
    }
  } else return fail('/flags', 'flags is required: an object of flags by key (or a list of flags with keys)');
  const setMetadata = doc.metadata ?? {};
  if (!isObject(setMetadata) || Object.values(setMetadata).some((v) => !['string', 'number', 'boolean'].includes(typeof v))) {
    return fail('/metadata', 'metadata values are strings, numbers or booleans');
  }
  const rawEvaluators = doc.$evaluators ?? {};
  if (!isObject(rawEvaluators)) return fail('/$evaluators', '$evaluators is an object of JSON Logic by name');
  const segments = new Map<string, Segment>();
  const inlineOnly = new Map<string, unknown>();
  for (const [key, logic] of Object.entries(rawEvaluators)) {
    const at = `/$evaluators/${escape(key)}`;
    if (!isObject(logic)) return fail(at, 'an evaluator is a JSON Logic object');
    const p = logicProblem(logic);
    if (p) return fail(at + p.path, p.message);
    const read = SEGMENT_KEY.test(key) ? readSegment(logic) : undefined;
    const segment = read && { key, name: key, description: '', ...read };
    if (segment && JSON.stringify(segmentLogic(segment)) === JSON.stringify(logic)) segments.set(key, segment);
    else inlineOnly.set(key, logic);
  }
  const flags: TargetedFlag[] = [];
  const embeddedByKey = new Map<string, EmbeddedTargeting>();
  const nonPortable = new Set<string>();
  const documentLogic = new Map<string, unknown>();
  for (const [key, raw, at] of entries) {
    yield;
    if (!isObject(raw)) return fail(at, 'a flag is an object', key);
    if (raw.state !== 'ENABLED' && raw.state !== 'DISABLED') return fail(`${at}/state`, 'state is ENABLED or DISABLED', key);
    if (!isObject(raw.variants) || Object.keys(raw.variants).length === 0)
      return fail(`${at}/variants`, 'variants is an object with at least one variant', key);
    const type = inferFlagType(raw.variants);
    if (!type) return fail(`${at}/variants`, 'variant values must all be booleans, all strings, all numbers or all objects', key);
    const defaultVariant = raw.defaultVariant ?? null;
    if (defaultVariant !== null && (typeof defaultVariant !== 'string' || !(defaultVariant in raw.variants))) {
      return fail(`${at}/defaultVariant`, 'the default variant must be one of the variants, or null', key);
    }
    const flagMetadata = raw.metadata ?? {};
    if (!isObject(flagMetadata) || Object.values(flagMetadata).some((v) => !['string', 'number', 'boolean'].includes(typeof v))) {
      return fail(`${at}/metadata`, 'metadata values are strings, numbers or booleans', key);
    }
    const metadata: Record<string, string | number | boolean> = {};
    for (const [k, v] of Object.entries({ ...setMetadata, ...flagMetadata })) {
      if (k !== META_TARGETING && k !== META_PORTABLE && k !== META_NOTE) metadata[k] = v as string | number | boolean;
    }
    if (raw.targeting !== undefined && !isObject(raw.targeting)) return fail(`${at}/targeting`, 'targeting is a JSON Logic object', key);
    const p = raw.targeting === undefined ? undefined : logicProblem(raw.targeting);
    if (p) return fail(`${at}/targeting${p.path}`, p.message, key);
    const targeting: FlagTargeting = { state: raw.state, variants: raw.variants as Variants, defaultVariant, prerequisites: [], rules: [] };
    if (Object.keys(metadata).length > 0) targeting.metadata = metadata;
    const logic = raw.targeting !== undefined && Object.keys(raw.targeting).length > 0 ? raw.targeting : undefined;
    if (logic !== undefined) documentLogic.set(key, logic);
    if (typeof flagMetadata[META_TARGETING] === 'string') {
      const payload = readEmbedded(flagMetadata[META_TARGETING]);
      if (payload) {
        embeddedByKey.set(key, payload);
        if (flagMetadata[META_PORTABLE] === false && logic === undefined) {
          nonPortable.add(key);
          targeting.state = payload.state;
          for (const s of payload.segments ?? []) if (!segments.has(s.key)) segments.set(s.key, s);
        }
      }
    }
    flags.push({ key, type, targeting });
  }
  // Typed readings, kept only when they compile back to the document's own JSON Logic.
  for (const flag of flags) {
    const payload = embeddedByKey.get(flag.key);
    if (payload) {
      flag.targeting.rules = payload.rules;
      flag.targeting.prerequisites = payload.prerequisites;
    } else {
      const rules = documentLogic.has(flag.key) ? readRules(documentLogic.get(flag.key)) : undefined;
      if (rules && rules.every((r) => r.segments.every((k) => segments.has(k)))) flag.targeting.rules = rules;
    }
  }
  const env = buildIndex(flags, [...segments.values()]);
  for (const flag of flags) {
    const logic = documentLogic.get(flag.key);
    if (nonPortable.has(flag.key)) continue;
    const compiled =
      flag.targeting.rules.length + flag.targeting.prerequisites.length > 0 ? targetingLogic(flag, env, { encode: false, refSegments: true }) : undefined;
    if (JSON.stringify(compiled) === JSON.stringify(logic)) continue;
    flag.targeting.rules = [];
    flag.targeting.prerequisites = [];
    if (logic !== undefined) flag.targeting.jsonLogic = inlineEvaluators(logic, inlineOnly);
  }
  const list = [...segments.values()];
  const problem = yield* environmentSteps(flags, list);
  if (problem) {
    // The document spells a flag's JSON Logic `targeting`.
    const inFlag = problem.path.replace(/^\/jsonLogic(?=\/|$)/, '/targeting');
    const path =
      problem.flagKey !== undefined ? `/flags/${escape(problem.flagKey)}${inFlag}` : `/$evaluators/${escape(problem.segmentKey ?? '')}${problem.path}`;
    return fail(path, problem.message, problem.flagKey);
  }
  return { flags, segments: list };
}

function readEmbedded(text: string): EmbeddedTargeting | undefined {
  try {
    const payload = JSON.parse(text) as EmbeddedTargeting;
    if (!isObject(payload) || payload.v !== 1 || !Array.isArray(payload.rules) || !Array.isArray(payload.prerequisites)) return undefined;
    if (payload.state !== 'ENABLED' && payload.state !== 'DISABLED') return undefined;
    if (payload.segments !== undefined && !Array.isArray(payload.segments)) return undefined;
    return payload;
  } catch {
    return undefined;
  }
}
