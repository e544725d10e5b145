import { answer, type CachedAnswer, type EnvironmentSnapshot } from './flag.read-model.ts';

// The one OFREP request parser and evaluator (issue 18), used by the route (src/flags/ofrep.routes.ts)
// and by the fast path (flag.fast-path.ts) alike, so that the two cannot answer differently.

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

/** The single evaluation of a key the snapshot knows (ofrepKnows), for a context. */
export function evaluateOfrepFlag(snapshot: EnvironmentSnapshot, key: string, _context: EvaluationContext): CachedAnswer {
  return snapshot.ofrep.get(key)!;
}

/** The bulk evaluation of every flag of the snapshot, for a context. Its ETag is a hash of its body. */
export function evaluateOfrepBulk(snapshot: EnvironmentSnapshot, _context: EvaluationContext): CachedAnswer {
  return snapshot.ofrepBulk;
}
