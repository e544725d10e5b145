import { createHash } from 'node:crypto';
import { message } from '../../errors.ts';
import { compileEnvironment, type CompiledEnvironment, type Segment } from '../../targeting/index.ts';
import { byNewest, type Flag, listedFlag, previewFlag, publicFlag } from '../flag.ts';
import { ofrepEvaluation, ofrepPayloadEvaluation, PAYLOAD_SUFFIX } from './ofrep.answers.ts';

// One environment's immutable snapshot (Flipt's shape; docs/adr/0026): the flags as loaded, compiled by
// the targeting engine, an explicit version of that configuration, and a cache of ready answers (bytes
// and ETags) for every read that does not depend on a context: GET /v1/flags... (which never evaluate:
// a flag with rules shows its default serve, docs/adr/0025) and the OFREP evaluations of flags whose
// answer is the same for every context. Only flags with targeting are evaluated per request.

/** A ready answer: status, exact body (as text and as the UTF-8 bytes sent) and strong ETag. */
export interface CachedAnswer {
  readonly status: number;
  readonly body: string;
  /** Encoded once, so that no read pays for turning a large list into bytes again. */
  readonly bytes: Buffer;
  readonly etag: string;
}

/** One OFREP key of a snapshot: `<slug>` or `<slug>:payload`. */
export interface OfrepEntry {
  readonly flag: Flag;
  readonly payload: boolean;
  /** The answer for every context, when the flag's evaluation does not read it; undefined otherwise. */
  readonly ready: CachedAnswer | undefined;
}

export interface EnvironmentSnapshot {
  readonly environmentId: string;
  /**
   * The version of the environment's configuration: a hash of its flags and segments, the same on every
   * instance that loaded the same rows. OFREP event streams announce it (`etag`) and clients name it back
   * (`flagConfigEtag`); it is not an ETag of any answer, since OFREP answers depend on the context.
   */
  readonly version: string;
  /** The environment's flags, newest first. */
  readonly flags: readonly Flag[];
  /** The flags compiled for evaluation (src/targeting); flags without targeting evaluate to a fixed answer. */
  readonly compiled: CompiledEnvironment;
  readonly single: ReadonlyMap<string, CachedAnswer>;
  readonly list: CachedAnswer;
  /**
   * GET /flags/preview, once built. Rendering preview content needs the preview renderer, which is
   * loaded on first use, so an environment with preview flags builds this answer on its first preview
   * read (FlagReadModel.preview), not when its flags are loaded.
   */
  preview: CachedAnswer | undefined;
  readonly previewFlags: readonly Flag[];
  /** OFREP single evaluations by key: `<slug>` and `<slug>:payload` (issue 10). */
  readonly ofrep: ReadonlyMap<string, OfrepEntry>;
  /** The OFREP bulk answer for every context; undefined when some flag's answer depends on the context. */
  readonly ofrepBulk: CachedAnswer | undefined;
  /** The bulk answer's flags in order: serialized when ready, the entry to evaluate otherwise. */
  readonly bulkParts: ReadonlyArray<string | OfrepEntry>;
  /** What follows the flags in the bulk answer: `,"metadata":...,"eventStreams":...}`. */
  readonly bulkTail: string;
  /** The newest updatedAt of the environment's flags, as Unix seconds (0 without flags). */
  readonly lastModified: number;
}

export interface EnvironmentFlags {
  environmentId: string;
  flags: Flag[];
  /** The project's segments, which rules of these flags may reference (issue 18). */
  segments: Segment[];
}

function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

/** The version of a configuration: every field of every flag (updatedAt included) and every segment. */
function versionOf(flags: readonly Flag[], segments: readonly Segment[]): string {
  const hash = createHash('sha1').update(JSON.stringify(flags));
  if (segments.length > 0) hash.update(JSON.stringify(segments));
  return hash.digest('base64url');
}

export function answer(status: number, value: unknown): CachedAnswer {
  return answerOfBody(status, JSON.stringify(value));
}

export function answerOfBody(status: number, body: string): CachedAnswer {
  return { status, body, bytes: Buffer.from(body), etag: etagOf(body) };
}

/** The single-flag 404 of the specification (enabled:false so clients treat the flag as off). */
export function flagNotFoundAnswer(slug: string): CachedAnswer {
  return answer(404, { enabled: false, error: true, message: message('flagNotFound', { slug }) });
}

export interface SnapshotOptions {
  /** Turns preview content into HTML; without it, the preview answer is left to build later. */
  render?: (doc: unknown) => string;
  /** The path and query of the environment's OFREP event stream, advertised in the bulk answer. */
  streamUri?: string;
  /** The compiled flags of the snapshot this one replaces: unchanged flags are not compiled again. */
  previous?: CompiledEnvironment;
}

export function buildSnapshot(env: EnvironmentFlags, { render, streamUri, previous }: SnapshotOptions = {}): EnvironmentSnapshot {
  const flags = [...env.flags].sort(byNewest);
  const compiled = compileEnvironment(
    flags.map((f) => ({ key: f.slug, type: f.type, targeting: f.targeting })),
    env.segments,
    { previous },
  );
  const single = new Map<string, CachedAnswer>();
  const ofrep = new Map<string, OfrepEntry>();
  const bulkParts: Array<string | OfrepEntry> = [];
  let lastModified = 0;
  let contextFree = true;
  for (const flag of flags) {
    single.set(flag.slug, answer(200, publicFlag(flag)));
    const value = { flag, payload: false, ready: undefined };
    const payload = { flag, payload: true, ready: undefined };
    if (compiled.isStatic(flag.slug)) {
      const evaluation = compiled.evaluate(flag.slug, {})!;
      const valueBody = JSON.stringify(ofrepEvaluation(flag, evaluation));
      const payloadBody = JSON.stringify(ofrepPayloadEvaluation(flag, evaluation));
      ofrep.set(flag.slug, { ...value, ready: answerOfBody(200, valueBody) });
      ofrep.set(`${flag.slug}${PAYLOAD_SUFFIX}`, { ...payload, ready: answerOfBody(200, payloadBody) });
      bulkParts.push(valueBody, payloadBody);
    } else {
      contextFree = false;
      ofrep.set(flag.slug, value);
      ofrep.set(`${flag.slug}${PAYLOAD_SUFFIX}`, payload);
      bulkParts.push(value, payload);
    }
    lastModified = Math.max(lastModified, Math.floor(Date.parse(flag.updatedAt) / 1000));
  }
  const previewFlags = flags.filter((f) => f.isPreview);
  const tail: Record<string, unknown> = { metadata: { flagCount: flags.length } };
  if (streamUri) tail.eventStreams = [{ type: 'sse', endpoint: { requestUri: streamUri }, inactivityDelaySec: 120 }];
  const bulkTail = `,${JSON.stringify(tail).slice(1)}`;
  return {
    environmentId: env.environmentId,
    version: versionOf(flags, env.segments),
    flags,
    compiled,
    single,
    list: answer(200, { flags: flags.map(listedFlag) }),
    preview: previewFlags.length === 0 || render ? previewAnswer(previewFlags, render ?? (() => '')) : undefined,
    previewFlags,
    ofrep,
    ofrepBulk: contextFree ? answerOfBody(200, bulkBody(bulkParts as string[], bulkTail)) : undefined,
    bulkParts,
    bulkTail,
    lastModified,
  };
}

/** The bulk answer's body from its serialized flags: exactly JSON.stringify({flags, metadata, eventStreams}). */
export function bulkBody(flags: readonly string[], tail: string): string {
  return `{"flags":[${flags.join(',')}]${tail}`;
}

export function previewAnswer(previewFlags: readonly Flag[], render: (doc: unknown) => string): CachedAnswer {
  return answer(200, { flags: previewFlags.map((f) => previewFlag(f, render(f.previewContent))) });
}
