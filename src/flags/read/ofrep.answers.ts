import type { Evaluation } from '../../targeting/index.ts';
import type { Flag } from '../flag.ts';

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
