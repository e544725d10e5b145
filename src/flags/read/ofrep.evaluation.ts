import { createHash, hash } from 'node:crypto';
import type { Evaluation } from '../../targeting/index.ts';
import { answer, type CachedAnswer, type EnvironmentSnapshot, type OfrepEntry } from './flag.snapshot.ts';
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

const FLAGS_OPEN = Buffer.from('{"flags":[');
const COMMA = 0x2c;

/**
 * The bulk evaluation of every flag of the snapshot, for a context. The body is put together from the
 * bytes of ready answers and of outcome answers; its ETag is a hash of the snapshot's part of the
 * configuration and of the ETags of the answers it is made of, so that it covers the context as well as
 * the configuration: a client whose attributes change never gets a 304 for an answer that would differ.
 */
export function evaluateOfrepBulk(snapshot: EnvironmentSnapshot, context: EvaluationContext): OfrepAnswer {
  if (snapshot.ofrepBulk) return { answer: snapshot.ofrepBulk, ready: true };
  const prepared = snapshot.compiled.prepare(context);
  if (prepared.problem !== undefined) return { answer: answer(400, { errorCode: 'INVALID_CONTEXT', errorDetails: prepared.problem }), ready: false };
  const parts: Buffer[] = [];
  const tags: string[] = [bulkTagOf(snapshot)];
  let length = 0;
  let evaluation: Evaluation | undefined;
  for (const part of snapshot.bulkParts) {
    let piece: CachedAnswer;
    if (part.ready) piece = part.ready;
    else {
      // A flag's payload entry follows its value entry, and answers for the same evaluation.
      if (!part.payload || evaluation?.key !== part.flag.slug) evaluation = prepared.evaluate(part.flag.slug)!;
      if (evaluation.errorCode) {
        const body = JSON.stringify(answerOf(part, evaluation));
        piece = { status: 200, body, bytes: Buffer.from(body), etag: `"${body}"` };
      } else piece = outcomeAnswer(part, evaluation);
      tags.push(piece.etag);
    }
    parts.push(piece.bytes);
    length += piece.bytes.length;
  }
  const tail = tailOf(snapshot);
  const bytes = Buffer.allocUnsafe(FLAGS_OPEN.length + length + Math.max(parts.length - 1, 0) + tail.length);
  let at = FLAGS_OPEN.copy(bytes, 0);
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) bytes[at++] = COMMA;
    at += parts[i]!.copy(bytes, at);
  }
  tail.copy(bytes, at);
  return { answer: new EvaluatedAnswer(bytes, `"${hash('sha1', tags.join('\n'), 'base64url')}"`), ready: false };
}

/** An evaluated bulk answer: sent as bytes, its text decoded only if someone asks. */
class EvaluatedAnswer implements CachedAnswer {
  readonly status = 200;
  constructor(
    readonly bytes: Buffer,
    readonly etag: string,
  ) {}

  get body(): string {
    return this.bytes.toString('utf8');
  }
}

const tails = new WeakMap<EnvironmentSnapshot, Buffer>();

function tailOf(snapshot: EnvironmentSnapshot): Buffer {
  let tail = tails.get(snapshot);
  if (!tail) tails.set(snapshot, (tail = Buffer.from(`]${snapshot.bulkTail}`)));
  return tail;
}

/**
 * The snapshot's part of an evaluated bulk answer's ETag: a hash of what the body holds besides the
 * evaluated flags (the ready answers, where each evaluated flag stands, the tail), made once per snapshot.
 */
function bulkTagOf(snapshot: EnvironmentSnapshot): string {
  if (snapshot.bulkTag === undefined) {
    const digest = createHash('sha1');
    for (const part of snapshot.bulkParts) digest.update(part.ready ? `${part.ready.etag}\n` : `?${part.flag.slug}${part.payload ? ':p' : ''}\n`);
    snapshot.bulkTag = digest.update(snapshot.bulkTail).digest('base64url');
  }
  return snapshot.bulkTag;
}

/** Outcomes remembered per entry: far more than rules and variants allow, a bound should that ever change. */
const MAX_OUTCOMES = 512;

/** The answer of an entry for one of its outcomes (an Evaluation object of the engine), serialized once. */
function outcomeAnswer(entry: OfrepEntry, evaluation: Evaluation): CachedAnswer {
  const known = entry.outcomes.get(evaluation);
  if (known) return known;
  const fresh = answer(200, answerOf(entry, evaluation));
  if (entry.outcomes.size < MAX_OUTCOMES) entry.outcomes.set(evaluation, fresh);
  return fresh;
}

function answerOf(entry: OfrepEntry, evaluation: Evaluation) {
  return entry.payload ? ofrepPayloadEvaluation(entry.flag, evaluation) : ofrepEvaluation(entry.flag, evaluation);
}
