import type { Flag } from '../flag.ts';

// OpenFeature Remote Evaluation Protocol (OFREP 0.3) answers of Flagpost's flags (issue 10;
// docs/adr/0014-ofrep.md). Flagpost does not target: every evaluation is STATIC, whatever the context.
// A flag's value is its `enabled` boolean, variant `on` or `off`; a flag that is off is never reported
// as DISABLED, since providers then answer the caller's default, which would turn a kill switch back on.
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

export function ofrepEvaluation(flag: Flag) {
  return { key: flag.slug, value: flag.enabled, reason: 'STATIC', variant: flag.enabled ? 'on' : 'off', metadata: metadataOf(flag) };
}

/** `<slug>:payload`: the payload object; a flag without payload has no value (the caller's default applies). */
export function ofrepPayloadEvaluation(flag: Flag) {
  // The payload itself is the value: no metadata repeats it.
  const evaluation = { key: `${flag.slug}${PAYLOAD_SUFFIX}`, reason: 'STATIC', variant: flag.enabled ? 'on' : 'off' };
  return flag.payload === null ? evaluation : { ...evaluation, value: flag.payload };
}

export function ofrepFlagNotFound(key: string) {
  return { key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `Flag ${key} does not exist in this environment` };
}
