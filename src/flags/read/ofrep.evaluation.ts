import type { Evaluation } from '../../targeting/index.ts';
import { answer, answerOfBody, bulkBody, type CachedAnswer, type EnvironmentSnapshot, type OfrepEntry } from './flag.snapshot.ts';
import type { FlagUsageTally } from './flag-usage-tally.ts';
import { ofrepEvaluation, ofrepPayloadEvaluation } from './ofrep.answers.ts';

// The one OFREP request parser and evaluator (issue 18), used by the route (src/flags/ofrep.routes.ts)
// and by the fast path (flag.fast-path.ts) alike, so that the two cannot answer differently. Flags whose
// answer does not depend on the context are answered from the snapshot's ready answers; the others are
// evaluated by the compiled engine for the request's context. The context is checked only when a flag
// reads it (src/targeting/context.ts): a bad one is OFREP's 400 INVALID_CONTEXT, never a 5xx.

/** An OpenFeature evaluation context as a client sent it: any JSON object. */
export type EvaluationContext = Record<string, unknown>;

/** A parsed request: its context (empty when none was sent), or the 400 answer OFREP gives for it. */
export type OfrepRequest = { context: EvaluationContext; problem?: undefined } | { context?: undefined; problem: CachedAnswer };

const NO_CONTEXT: EvaluationContext = Object.freeze({}) as EvaluationContext;

/**
 * Reads an evaluation request's body. Lenient, as OpenFeature providers are: no body, an empty one, `{}`
 * or a null context evaluate with an empty context; a body that is not JSON is a PARSE_ERROR and a
 * context that is not an object INVALID_CONTEXT. `key` is named in the error of a single evaluation.
 */
export function parseOfrepRequest(text: string, key: string | undefined): OfrepRequest {
  const trimmed = text.trim();
  if (trimmed === '') return { context: NO_CONTEXT };
  let body: unknown;
  try {
    body = JSON.parse(trimmed);
  } catch {
    return problem(key, 'PARSE_ERROR', 'The body is not JSON');
  }
  const context = body !== null && typeof body === 'object' ? (body as { context?: unknown }).context : undefined;
  if (context === undefined || context === null) return { context: NO_CONTEXT };
  if (typeof context !== 'object' || Array.isArray(context)) return problem(key, 'INVALID_CONTEXT', 'context must be an object');
  return { context: context as EvaluationContext };
}

function problem(key: string | undefined, errorCode: string, errorDetails: string): OfrepRequest {
  return { problem: answer(400, { ...(key === undefined ? {} : { key }), errorCode, errorDetails }) };
}

/** True when `key` names an evaluation of the snapshot (`<slug>` or `<slug>:payload`). */
export function ofrepKnows(snapshot: EnvironmentSnapshot, key: string): boolean {
  return snapshot.ofrep.has(key);
}

/** An OFREP answer: ready in the snapshot (the same bytes for every context), or evaluated for this request. */
export interface OfrepAnswer {
  readonly answer: CachedAnswer;
  /** True for a ready answer: headers and compressed forms may be kept with it; an evaluated one is sent once. */
  readonly ready: boolean;
}

/** The single evaluation of a key the snapshot knows (ofrepKnows), for a context. */
export function evaluateOfrepFlag(snapshot: EnvironmentSnapshot, key: string, context: EvaluationContext): OfrepAnswer {
  const entry = snapshot.ofrep.get(key)!;
  if (entry.ready) return { answer: entry.ready, ready: true };
  const evaluation = snapshot.compiled.evaluate(entry.flag.slug, context)!;
  if (evaluation.errorCode) {
    // OFREP: a single evaluation that fails is a 400 naming the key.
    return { answer: answer(400, { key, errorCode: evaluation.errorCode, errorDetails: evaluation.errorDetails ?? '' }), ready: false };
  }
  return { answer: outcomeAnswer(entry, evaluation), ready: false };
}

/**
 * The bulk evaluation of every flag of the snapshot, for a context. Its ETag is a hash of its body, so
 * that it covers the context as well as the configuration: a client whose attributes change never gets
 * a 304 for an answer that would differ.
 */
export function evaluateOfrepBulk(snapshot: EnvironmentSnapshot, context: EvaluationContext): OfrepAnswer {
  if (snapshot.ofrepBulk) return { answer: snapshot.ofrepBulk, ready: true };
  const evaluations = new Map<string, Evaluation>();
  for (const evaluation of snapshot.compiled.evaluateAll(context)) evaluations.set(evaluation.key, evaluation);
  const flags: string[] = [];
  for (const part of snapshot.bulkParts) {
    if (typeof part === 'string') {
      flags.push(part);
      continue;
    }
    // evaluateAll leaves out flags that serve no value (flagd's bulk); OFREP answers them without one.
    const slug = part.flag.slug;
    const evaluation = evaluations.get(slug) ?? snapshot.compiled.evaluate(slug, context)!;
    if (evaluation.errorCode === 'INVALID_CONTEXT') {
      return { answer: answer(400, { errorCode: 'INVALID_CONTEXT', errorDetails: evaluation.errorDetails ?? '' }), ready: false };
    }
    flags.push(evaluation.errorCode ? JSON.stringify(answerOf(part, evaluation)) : outcomeAnswer(part, evaluation).body);
  }
  return { answer: answerOfBody(200, bulkBody(flags, snapshot.bulkTail)), ready: false };
}

/**
 * Counts an answered OFREP evaluation (flag-usage-tally.ts): a single one of a known key is one
 * evaluation of its flag (`<slug>:payload` too), whatever its outcome; a bulk one that answered 200 is
 * one evaluation of every flag of the environment.
 */
export function countOfrepRead(usage: FlagUsageTally, snapshot: EnvironmentSnapshot, key: string | undefined, status: number): void {
  if (key !== undefined) usage.one('ofrep_single', snapshot.environmentId, snapshot.ofrep.get(key)!.flag.slug);
  else if (status === 200) usage.all('ofrep_bulk', snapshot.environmentId, snapshot.flags);
}

/**
 * Answers of a snapshot's targeted flags by outcome, serialized once: a flag has few outcomes (a variant
 * with the rule that served it, or the default), and turning one into JSON text, bytes and an ETag costs
 * more than evaluating it. The engine hands out one frozen metadata object per rule of a compiled flag,
 * so (metadata, reason, variant) names an outcome; the value follows from the variant.
 */
const outcomes = new WeakMap<OfrepEntry, Map<object, Map<string, CachedAnswer>>>();
/** Outcomes remembered per flag: far more than rules and variants allow, a bound should that ever change. */
const MAX_OUTCOMES = 512;

function outcomeAnswer(entry: OfrepEntry, evaluation: Evaluation): CachedAnswer {
  let byMetadata = outcomes.get(entry);
  if (!byMetadata) outcomes.set(entry, (byMetadata = new Map()));
  let byResult = byMetadata.get(evaluation.metadata);
  const result = `${evaluation.reason}\n${evaluation.variant ?? ''}`;
  const known = byResult?.get(result);
  if (known) return known;
  const fresh = answer(200, answerOf(entry, evaluation));
  if (byMetadata.size < MAX_OUTCOMES) {
    if (!byResult) byMetadata.set(evaluation.metadata, (byResult = new Map()));
    if (byResult.size < MAX_OUTCOMES) byResult.set(result, fresh);
  }
  return fresh;
}

function answerOf(entry: OfrepEntry, evaluation: Evaluation) {
  return entry.payload ? ofrepPayloadEvaluation(entry.flag, evaluation) : ofrepEvaluation(entry.flag, evaluation);
}
