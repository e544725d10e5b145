import type { CompiledEnvironment, Evaluation } from '../targeting/index.ts';
import type { Flag } from '../flags/flag.ts';
import { answer, answerOfBody, type CachedAnswer } from './cached-answer.ts';
import { REASON_SLOT, type ReasonCounts, reasonCounts } from './flag-usage-tally.ts';

// OpenFeature Remote Evaluation Protocol (OFREP 0.3) answers of Flagpost's flags (issues 10 and 18;
// docs/adr/0014-ofrep.md, docs/adr/0026-read-model-and-ofrep-context.md). An answer is the engine's
// evaluation of the flag (src/targeting) for a context: value, variant, reason (STATIC without
// targeting, TARGETING_MATCH or SPLIT for a rule, DEFAULT when none matched, DISABLED only for a flag
// switched off in flagd's sense: never for a boolean flag that is merely false, since providers then
// answer the caller's default, which would turn a kill switch back on) and metadata (the flag's, and
// the rule and segments that matched). No value when no variant is served: the caller's default applies.
// The payload object is its own key, `<slug>:payload` (no slug has a colon), so getObjectValue works.

export const PAYLOAD_SUFFIX = ':payload';

type Metadata = Record<string, string | number | boolean>;

/**
 * OFREP metadata holds only strings, numbers and booleans: the payload travels as JSON text. Only what
 * is set is sent: the bulk answer carries every flag twice and should cost about what GET /v1/flags costs.
 */
function metadataOf(flag: Flag): Metadata {
  const metadata: Metadata = {};
  if (flag.description) metadata.description = flag.description;
  if (flag.expiredAt) metadata.expiredAt = flag.expiredAt;
  if (flag.payload !== null) metadata.payload = JSON.stringify(flag.payload);
  return metadata;
}

/** The OFREP answer of a flag for one evaluation; an evaluation that failed is `{key, errorCode, errorDetails}`. */
export function ofrepEvaluation(flag: Flag, evaluation: Evaluation) {
  if (evaluation.errorCode) return { key: flag.slug, errorCode: evaluation.errorCode, errorDetails: evaluation.errorDetails ?? '' };
  const metadata = { ...metadataOf(flag), ...evaluation.metadata };
  if (evaluation.value === undefined) {
    return evaluation.variant === undefined
      ? { key: flag.slug, reason: evaluation.reason, metadata }
      : { key: flag.slug, reason: evaluation.reason, variant: evaluation.variant, metadata };
  }
  return { key: flag.slug, value: evaluation.value, reason: evaluation.reason, variant: evaluation.variant, metadata };
}

/**
 * `<slug>:payload`: the payload object, with the reason and variant of the flag's evaluation. No value
 * when the flag has no payload or serves no value (switched off in flagd's sense, no variant served).
 */
export function ofrepPayloadEvaluation(flag: Flag, evaluation: Evaluation) {
  const key = `${flag.slug}${PAYLOAD_SUFFIX}`;
  if (evaluation.errorCode) return { key, errorCode: evaluation.errorCode, errorDetails: evaluation.errorDetails ?? '' };
  // The payload itself is the value: no metadata repeats it.
  const answer = evaluation.variant === undefined ? { key, reason: evaluation.reason } : { key, reason: evaluation.reason, variant: evaluation.variant };
  return flag.payload === null || evaluation.value === undefined ? answer : { ...answer, value: flag.payload };
}

export function ofrepFlagNotFound(key: string) {
  return { key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `Flag ${key} does not exist in this environment` };
}

// The answer cache of the OFREP read surface of one environment snapshot (flag.snapshot.ts): an entry
// per key, with the answer for every context when the flag's evaluation does not read the context, and
// the bulk answer when every flag's is. An entry is kept while its Flag object and its compiled flag are
// (docs/adr/0028): only changed flags, and the flags using a changed segment or prerequisite, are
// serialized again.

/** One OFREP key of a snapshot: `<slug>` or `<slug>:payload`. */
export interface OfrepEntry {
  readonly flag: Flag;
  readonly payload: boolean;
  /** The answer for every context, when the flag's evaluation does not read it; undefined otherwise. */
  readonly ready: CachedAnswer | undefined;
  /** The reason slot of the ready answer (flag-usage-tally.ts), for the metrics; -1 when not ready. */
  readonly readyReason: number;
  /** The compiled flag it answers for (CompiledEnvironment.compiledOf): the entry is kept while both are. */
  readonly compiled: object;
  /**
   * Answers by outcome, serialized on first use (ofrep.evaluation.ts): the engine answers each outcome of
   * a compiled flag with one Evaluation object, and turning it into JSON, bytes and an ETag costs more
   * than evaluating it.
   */
  readonly outcomes: Map<Evaluation, CachedAnswer>;
}

/** The OFREP answers of one snapshot. */
export interface OfrepAnswers {
  /** OFREP single evaluations by key: `<slug>` and `<slug>:payload` (issue 10). */
  readonly entries: ReadonlyMap<string, OfrepEntry>;
  /** The OFREP bulk answer for every context; undefined when some flag's answer depends on the context. */
  readonly bulk: CachedAnswer | undefined;
  /** The bulk answer's flags in order: ready, or to evaluate for the context. */
  readonly bulkParts: readonly OfrepEntry[];
  /**
   * The reason counts of the flags whose OFREP answer is ready (the same for every context): what a bulk
   * read counts as when `bulk` is set, and the part of it that needs no evaluation otherwise.
   */
  readonly readyReasons: ReasonCounts;
  /** What follows the flags in the bulk answer: `,"metadata":...,"eventStreams":...}`. */
  readonly bulkTail: string;
}

/**
 * The OFREP answers of an environment's flags (newest first) as `compiled` compiled them. `streamUri`:
 * the path and query of the environment's OFREP event stream, advertised in the bulk answer.
 * `previous`: the answers of the snapshot this one replaces, whose entries of unchanged flags are kept.
 */
export function buildOfrepAnswers(flags: readonly Flag[], compiled: CompiledEnvironment, streamUri: string | undefined, previous?: OfrepAnswers): OfrepAnswers {
  const entries = new Map<string, OfrepEntry>();
  const bulkParts: OfrepEntry[] = [];
  let contextFree = true;
  const readyReasons = reasonCounts([]);
  for (const flag of flags) {
    const payloadKey = `${flag.slug}${PAYLOAD_SUFFIX}`;
    const token = compiled.compiledOf(flag.slug)!;
    const old = previous?.entries.get(flag.slug);
    let value: OfrepEntry;
    let payload: OfrepEntry;
    if (old !== undefined && old.flag === flag && old.compiled === token) {
      value = old;
      payload = previous!.entries.get(payloadKey)!;
    } else if (compiled.isStatic(flag.slug)) {
      const evaluation = compiled.evaluate(flag.slug, {})!;
      const reason = reasonSlotOf(evaluation);
      value = entry(flag, false, token, answer(200, ofrepEvaluation(flag, evaluation)), reason);
      payload = entry(flag, true, token, answer(200, ofrepPayloadEvaluation(flag, evaluation)), reason);
    } else {
      value = entry(flag, false, token, undefined, -1);
      payload = entry(flag, true, token, undefined, -1);
    }
    if (!value.ready) contextFree = false;
    else readyReasons[value.readyReason]!++;
    entries.set(flag.slug, value);
    entries.set(payloadKey, payload);
    bulkParts.push(value, payload);
  }
  const tail: Record<string, unknown> = { metadata: { flagCount: flags.length } };
  if (streamUri) tail.eventStreams = [{ type: 'sse', endpoint: { requestUri: streamUri }, inactivityDelaySec: 120 }];
  const bulkTail = `,${JSON.stringify(tail).slice(1)}`;
  return {
    entries,
    bulk: contextFree
      ? answerOfBody(
          200,
          bulkBody(
            bulkParts.map((p) => p.ready!.body),
            bulkTail,
          ),
        )
      : undefined,
    bulkParts,
    readyReasons,
    bulkTail,
  };
}

function entry(flag: Flag, payload: boolean, compiled: object, ready: CachedAnswer | undefined, readyReason: number): OfrepEntry {
  return { flag, payload, ready, readyReason, compiled, outcomes: new Map() };
}

/** The reason slot an evaluation is counted with: ERROR for a failed one, else its reason. */
export function reasonSlotOf(evaluation: Evaluation): number {
  return evaluation.errorCode ? REASON_SLOT.ERROR : REASON_SLOT[evaluation.reason];
}

/** The bulk answer's body from its serialized flags: exactly JSON.stringify({flags, metadata, eventStreams}). */
export function bulkBody(flags: readonly string[], tail: string): string {
  return `{"flags":[${flags.join(',')}]${tail}`;
}
