import { createHash, hash } from 'node:crypto';
import type { Evaluation } from '../targeting/index.ts';
import { answer, type CachedAnswer } from './cached-answer.ts';
import type { EnvironmentSnapshot } from './flag.snapshot.ts';
import type { FlagUsageTally, ReasonCounts } from './flag-usage-tally.ts';
import { type OfrepEntry, ofrepEvaluation, ofrepPayloadEvaluation, reasonSlotOf } from './ofrep.answers.ts';

// The one OFREP request parser and evaluator (issue 18), used by the route (src/evaluation/ofrep.routes.ts)
// and by the fast path (flag.fast-path.ts) alike, so that the two cannot answer differently. Flags whose
// answer does not depend on the context are answered from the snapshot's ready answers; the others are
// evaluated by the compiled engine for the request's context. The context is checked only when a flag
// reads it (src/targeting/context.ts): a bad one is OFREP's 400 INVALID_CONTEXT, never a 5xx.

/**
 * An OpenFeature evaluation context as a client sent it: any JSON object, as parseOfrepRequest reads
 * it. The evaluations below are handed it (they may read it without copying it): do not change it after.
 */
export type EvaluationContext = Record<string, unknown>;

/** Contexts here are the request's own values from JSON.parse (see EvaluationContext). */
const HANDED_OVER = Object.freeze({ parsed: true });

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
  return snapshot.ofrep.entries.has(key);
}

/** An OFREP answer: ready in the snapshot (the same bytes for every context), or evaluated for this request. */
export interface OfrepAnswer {
  readonly answer: CachedAnswer;
  /** True for a ready answer: headers and compressed forms may be kept with it; an evaluated one is sent once. */
  readonly ready: boolean;
}

/** A single evaluation's answer, with the reason slot it is counted with (flag-usage-tally.ts). */
export interface OfrepFlagAnswer extends OfrepAnswer {
  readonly reason: number;
  /** The engine's evaluation, when the flag was evaluated for the context (server-side exposures read it: exposure-port.ts). */
  readonly evaluation?: Evaluation;
}

/** A bulk evaluation's answer, with the reason counts of its flags (flag-usage-tally.ts). */
export interface OfrepBulkAnswer extends OfrepAnswer {
  readonly reasons: ReasonCounts;
}

/** The single evaluation of a key the snapshot knows (ofrepKnows), for a context. */
export function evaluateOfrepFlag(snapshot: EnvironmentSnapshot, key: string, context: EvaluationContext): OfrepFlagAnswer {
  const entry = snapshot.ofrep.entries.get(key)!;
  if (entry.ready) return { answer: entry.ready, ready: true, reason: entry.readyReason };
  const evaluation = snapshot.compiled.evaluate(entry.flag.slug, context, HANDED_OVER)!;
  const reason = reasonSlotOf(evaluation);
  if (evaluation.errorCode) {
    // OFREP: a single evaluation that fails is a 400 naming the key.
    return { answer: answer(400, { key, errorCode: evaluation.errorCode, errorDetails: evaluation.errorDetails ?? '' }), ready: false, reason };
  }
  return { answer: outcomeAnswer(entry, evaluation), ready: false, reason, evaluation };
}

/**
 * The bulk evaluation of every flag of the snapshot, for a context. The body is copied together from
 * bytes made once: the ready bytes between evaluated flags (ready answers, commas, the opening and the
 * tail), and per evaluated flag the pair of answers (value and payload) of its outcome. Its ETag is the
 * snapshot's part (a SHA-1 of everything but the evaluated flags) and a 64-bit hash of the SHA-1s of the
 * evaluated pairs, so that it covers the context as well as the configuration: a client whose
 * attributes change never gets a 304 for an answer that would differ.
 */
export function evaluateOfrepBulk(snapshot: EnvironmentSnapshot, context: EvaluationContext): OfrepBulkAnswer {
  if (snapshot.ofrep.bulk) return { answer: snapshot.ofrep.bulk, ready: true, reasons: snapshot.ofrep.readyReasons };
  const prepared = snapshot.compiled.prepare(context, HANDED_OVER);
  if (prepared.problem !== undefined) {
    return { answer: answer(400, { errorCode: 'INVALID_CONTEXT', errorDetails: prepared.problem }), ready: false, reasons: snapshot.ofrep.readyReasons };
  }
  const plan = planOf(snapshot);
  // The ready flags' reasons, and each evaluated flag's.
  const reasons = snapshot.ofrep.readyReasons.slice();
  const { steps, fixed } = plan;
  const chosen: Buffer[] = new Array(steps.length);
  let length = plan.fixedLength;
  let h1 = 0x2545f491;
  let h2 = 0x9e3779b9;
  for (let k = 0; k < steps.length; k++) {
    const step = steps[k]!;
    const evaluation = prepared.evaluate(step.slug)!;
    reasons[reasonSlotOf(evaluation)]!++;
    const piece = pairPiece(step, evaluation);
    // A piece starts with the comma that separates it from what comes before, unless it comes first.
    const bytes = step.first ? piece.bytes.subarray(1) : piece.bytes;
    chosen[k] = bytes;
    length += bytes.length;
    // Each step is a bijection of the state for a given piece: bodies that differ in one flag never share a tag.
    h1 = Math.imul(h1 ^ piece.h1, 0x85ebca6b);
    h1 ^= h1 >>> 13;
    h2 = Math.imul(h2 ^ piece.h2, 0xc2b2ae35);
    h2 ^= h2 >>> 16;
  }
  const body = bodyBuffer(length);
  let at = 0;
  for (let k = 0; k < steps.length; k++) {
    const before = fixed[k]!;
    if (before.length > 0) {
      body.set(before, at);
      at += before.length;
    }
    const bytes = chosen[k]!;
    body.set(bytes, at);
    at += bytes.length;
  }
  body.set(fixed[steps.length]!, at);
  const etag = `"${plan.tag}${hex8(h1)}${hex8(h2)}"`;
  return { answer: new EvaluatedAnswer(body, etag), ready: false, reasons };
}

/** Two hex digits per byte value. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
/** A 32-bit number as 8 hex digits: `(n >>> 0).toString(16).padStart(8, '0')`, without the number formatting. */
const hex8 = (n: number) => HEX[(n >>> 24) & 255]! + HEX[(n >>> 16) & 255]! + HEX[(n >>> 8) & 255]! + HEX[n & 255]!;

/**
 * Evaluated bodies are cut from shared slabs, as Node cuts small buffers from its pool
 * (Buffer.allocUnsafe), so that a body of a few kilobytes costs no allocation of its own: every byte of
 * it is written before it is sent, and no slab range is handed out twice. A slab lives as long as a body
 * cut from it does. Bodies larger than an eighth of a slab get their own memory.
 */
const SLAB_BYTES = 256 * 1024;
let slab: ArrayBuffer | undefined;
let slabUsed = 0;

function bodyBuffer(length: number): Buffer {
  if (length > SLAB_BYTES / 8) return Buffer.allocUnsafeSlow(length);
  if (slab === undefined || slabUsed + length > SLAB_BYTES) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES).buffer as ArrayBuffer;
    slabUsed = 0;
  }
  const body = Buffer.from(slab, slabUsed, length);
  // The next body starts 8-aligned, as Node's pool does.
  slabUsed = (slabUsed + length + 7) & ~7;
  return body;
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

/** A flag to evaluate in a bulk answer: its two entries, and the pieces of its outcomes made so far. */
interface EvaluatedStep {
  readonly slug: string;
  /** True for the body's first flag: no comma before it. */
  readonly first: boolean;
  readonly value: OfrepEntry;
  readonly payload: OfrepEntry;
  readonly pieces: Map<Evaluation, BulkPiece>;
}

/**
 * Counts an answered OFREP evaluation (flag-usage-tally.ts): a single one of a known key is one
 * evaluation of its flag (`<slug>:payload` too), whatever its outcome, with the reason it answered
 * (ERROR for a failed one); a bulk one that answered 200 is one evaluation of every flag of the
 * environment, each with its own reason.
 */
export function countOfrepRead(
  usage: FlagUsageTally,
  snapshot: EnvironmentSnapshot,
  key: string | undefined,
  evaluated: OfrepFlagAnswer | OfrepBulkAnswer,
): void {
  if (key !== undefined) usage.one('ofrep_single', snapshot.environmentId, snapshot.ofrep.entries.get(key)!.flag.slug, (evaluated as OfrepFlagAnswer).reason);
  else if (evaluated.answer.status === 200) usage.all('ofrep_bulk', snapshot.environmentId, snapshot.flags, (evaluated as OfrepBulkAnswer).reasons);
}

/**
 * How a snapshot's evaluated bulk answer is put together, made on its first bulk evaluation: the flags
 * to evaluate, in order, and the ready bytes around them (fixed[k] before step k, often empty; the last
 * one ends with the tail); and the snapshot's part of the ETag.
 */
interface BulkPlan {
  readonly steps: readonly EvaluatedStep[];
  readonly fixed: readonly Buffer[];
  /** The length of all the fixed bytes. */
  readonly fixedLength: number;
  readonly tag: string;
}

const plans = new WeakMap<EnvironmentSnapshot, BulkPlan>();

function planOf(snapshot: EnvironmentSnapshot): BulkPlan {
  let plan = plans.get(snapshot);
  if (plan) return plan;
  const digest = createHash('sha1');
  const steps: EvaluatedStep[] = [];
  const fixed: Buffer[] = [];
  let run: string[] = ['{"flags":['];
  const parts = snapshot.ofrep.bulkParts;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const separator = i === 0 ? '' : ',';
    if (part.ready) {
      run.push(separator, part.ready.body);
      digest.update(`${part.ready.etag}\n`);
      continue;
    }
    // The payload entry follows its value entry and answers for the same evaluation (buildSnapshot).
    if (part.payload) continue;
    fixed.push(Buffer.from(run.join('')));
    run = [];
    // Pieces are kept per value entry, which a snapshot takes over from the last one while the flag is unchanged.
    let pieces = piecesOf.get(part);
    if (!pieces) piecesOf.set(part, (pieces = new Map()));
    steps.push({ slug: part.flag.slug, first: i === 0, value: part, payload: parts[i + 1]!, pieces });
    digest.update(`?${part.flag.slug}${separator}\n`);
  }
  const tail = `]${snapshot.ofrep.bulkTail}`;
  run.push(tail);
  fixed.push(Buffer.from(run.join('')));
  plan = { steps, fixed, fixedLength: fixed.reduce((n, b) => n + b.length, 0), tag: digest.update(tail).digest('base64url') };
  plans.set(snapshot, plan);
  return plan;
}

/** One evaluated flag's part of a bulk body, `,<value answer>,<payload answer>`, and the SHA-1 of all but its first comma as two 32-bit numbers. */
interface BulkPiece {
  readonly bytes: Buffer;
  readonly h1: number;
  readonly h2: number;
}

/** Pieces by value entry (its payload entry is made and kept with it: buildSnapshot), then by outcome; errors are made per request. */
const piecesOf = new WeakMap<OfrepEntry, Map<Evaluation, BulkPiece>>();

function pairPiece(step: EvaluatedStep, evaluation: Evaluation): BulkPiece {
  const known = step.pieces.get(evaluation);
  if (known) return known;
  const text = (entry: OfrepEntry) => (evaluation.errorCode ? JSON.stringify(answerOf(entry, evaluation)) : outcomeAnswer(entry, evaluation).body);
  const bytes = Buffer.from(`,${text(step.value)},${text(step.payload)}`);
  const sha = hash('sha1', bytes.subarray(1), 'buffer') as unknown as Buffer;
  const piece = { bytes, h1: sha.readInt32LE(0), h2: sha.readInt32LE(4) };
  if (evaluation.errorCode) return piece;
  if (step.pieces.size < MAX_OUTCOMES) step.pieces.set(evaluation, piece);
  return piece;
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
