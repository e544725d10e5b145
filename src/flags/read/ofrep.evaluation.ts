import { createHash, hash } from 'node:crypto';
import type { Evaluation } from '../../targeting/index.ts';
import { answer, type CachedAnswer, type EnvironmentSnapshot, type OfrepEntry, reasonSlotOf } from './flag.snapshot.ts';
import type { FlagUsageTally, ReasonCounts } from './flag-usage-tally.ts';
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

/** A single evaluation's answer, with the reason slot it is counted with (flag-usage-tally.ts). */
export interface OfrepFlagAnswer extends OfrepAnswer {
  readonly reason: number;
}

/** A bulk evaluation's answer, with the reason counts of its flags (flag-usage-tally.ts). */
export interface OfrepBulkAnswer extends OfrepAnswer {
  readonly reasons: ReasonCounts;
}

/** The single evaluation of a key the snapshot knows (ofrepKnows), for a context. */
export function evaluateOfrepFlag(snapshot: EnvironmentSnapshot, key: string, context: EvaluationContext): OfrepFlagAnswer {
  const entry = snapshot.ofrep.get(key)!;
  if (entry.ready) return { answer: entry.ready, ready: true, reason: entry.readyReason };
  const evaluation = snapshot.compiled.evaluate(entry.flag.slug, context)!;
  const reason = reasonSlotOf(evaluation);
  if (evaluation.errorCode) {
    // OFREP: a single evaluation that fails is a 400 naming the key.
    return { answer: answer(400, { key, errorCode: evaluation.errorCode, errorDetails: evaluation.errorDetails ?? '' }), ready: false, reason };
  }
  return { answer: outcomeAnswer(entry, evaluation), ready: false, reason };
}

/**
 * The bulk evaluation of every flag of the snapshot, for a context. The body is copied together from
 * bytes made once: runs of ready answers, and per evaluated flag the pair of answers (value and payload)
 * of its outcome. Its ETag is the snapshot's part (a SHA-1 of everything but the evaluated flags) and a
 * 64-bit hash of the SHA-1s of the evaluated pairs, so that it covers the context as well as the
 * configuration: a client whose attributes change never gets a 304 for an answer that would differ.
 */
export function evaluateOfrepBulk(snapshot: EnvironmentSnapshot, context: EvaluationContext): OfrepBulkAnswer {
  if (snapshot.ofrepBulk) return { answer: snapshot.ofrepBulk, ready: true, reasons: snapshot.readyReasons };
  const prepared = snapshot.compiled.prepare(context);
  if (prepared.problem !== undefined) {
    return { answer: answer(400, { errorCode: 'INVALID_CONTEXT', errorDetails: prepared.problem }), ready: false, reasons: snapshot.readyReasons };
  }
  const plan = planOf(snapshot);
  // The ready flags' reasons, and each evaluated flag's.
  const reasons = snapshot.readyReasons.slice();
  const parts: Buffer[] = [];
  let length = 0;
  let h1 = 0x2545f491;
  let h2 = 0x9e3779b9;
  for (const step of plan.steps) {
    let bytes: Buffer;
    if (!('value' in step)) bytes = step;
    else {
      const evaluation = prepared.evaluate(step.value.flag.slug)!;
      reasons[reasonSlotOf(evaluation)]!++;
      const piece = pairPiece(step.value, step.payload, evaluation);
      bytes = piece.bytes;
      if (step.comma) {
        parts.push(COMMA);
        length++;
      }
      // Each step is a bijection of the state for a given piece: bodies that differ in one flag never share a tag.
      h1 = Math.imul(h1 ^ piece.h1, 0x85ebca6b);
      h1 ^= h1 >>> 13;
      h2 = Math.imul(h2 ^ piece.h2, 0xc2b2ae35);
      h2 ^= h2 >>> 16;
    }
    parts.push(bytes);
    length += bytes.length;
  }
  const body = Buffer.allocUnsafe(plan.open.length + length + plan.tail.length);
  let at = plan.open.copy(body, 0);
  for (const part of parts) at += part.copy(body, at);
  plan.tail.copy(body, at);
  const etag = `"${plan.tag}${(h1 >>> 0).toString(16).padStart(8, '0')}${(h2 >>> 0).toString(16).padStart(8, '0')}"`;
  return { answer: new EvaluatedAnswer(body, etag), ready: false, reasons };
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

const COMMA = Buffer.from(',');

/** A flag to evaluate in a bulk answer: its two entries, and whether a comma goes before them. */
interface EvaluatedStep {
  readonly value: OfrepEntry;
  readonly payload: OfrepEntry;
  readonly comma: boolean;
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
  if (key !== undefined) usage.one('ofrep_single', snapshot.environmentId, snapshot.ofrep.get(key)!.flag.slug, (evaluated as OfrepFlagAnswer).reason);
  else if (evaluated.answer.status === 200) usage.all('ofrep_bulk', snapshot.environmentId, snapshot.flags, (evaluated as OfrepBulkAnswer).reasons);
}

/**
 * How a snapshot's evaluated bulk answer is put together, made on its first bulk evaluation: the
 * opening, then steps (ready bytes, commas included, or a flag to evaluate), then the tail; and the
 * snapshot's part of the ETag.
 */
interface BulkPlan {
  readonly open: Buffer;
  readonly steps: ReadonlyArray<Buffer | EvaluatedStep>;
  readonly tail: Buffer;
  readonly tag: string;
}

const plans = new WeakMap<EnvironmentSnapshot, BulkPlan>();

function planOf(snapshot: EnvironmentSnapshot): BulkPlan {
  let plan = plans.get(snapshot);
  if (plan) return plan;
  const digest = createHash('sha1');
  const steps: Array<Buffer | EvaluatedStep> = [];
  let run: string[] = [];
  const parts = snapshot.bulkParts;
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
    if (run.length > 0) steps.push(Buffer.from(run.join('')));
    run = [];
    steps.push({ value: part, payload: parts[i + 1]!, comma: i > 0 });
    digest.update(`?${part.flag.slug}${separator}\n`);
  }
  if (run.length > 0) steps.push(Buffer.from(run.join('')));
  const tail = `]${snapshot.bulkTail}`;
  plan = { open: Buffer.from('{"flags":['), steps, tail: Buffer.from(tail), tag: digest.update(tail).digest('base64url') };
  plans.set(snapshot, plan);
  return plan;
}

/** One evaluated flag's part of a bulk body, `<value answer>,<payload answer>`, and its SHA-1 as two 32-bit numbers. */
interface BulkPiece {
  readonly bytes: Buffer;
  readonly h1: number;
  readonly h2: number;
}

/** Pieces by value entry (its payload entry is made and kept with it: buildSnapshot), then by outcome; errors are made per request. */
const pieces = new WeakMap<OfrepEntry, Map<Evaluation, BulkPiece>>();

function pairPiece(value: OfrepEntry, payload: OfrepEntry, evaluation: Evaluation): BulkPiece {
  let byOutcome = pieces.get(value);
  const known = byOutcome?.get(evaluation);
  if (known) return known;
  const text = (entry: OfrepEntry) => (evaluation.errorCode ? JSON.stringify(answerOf(entry, evaluation)) : outcomeAnswer(entry, evaluation).body);
  const bytes = Buffer.from(`${text(value)},${text(payload)}`);
  const sha = hash('sha1', bytes, 'buffer') as unknown as Buffer;
  const piece = { bytes, h1: sha.readInt32LE(0), h2: sha.readInt32LE(4) };
  if (evaluation.errorCode) return piece;
  if (!byOutcome) pieces.set(value, (byOutcome = new Map()));
  if (byOutcome.size < MAX_OUTCOMES) byOutcome.set(evaluation, piece);
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
