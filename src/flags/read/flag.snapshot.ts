import { createHash } from 'node:crypto';
import { message } from '../../errors.ts';
import { compileEnvironment, type CompiledEnvironment, type Evaluation, type Segment, type TargetedFlag } from '../../targeting/index.ts';
import { sameJson } from '../../targeting/engine.ts';
import { byNewest, type Flag, listedFlag, previewFlag, publicFlag, targetedFlag } from '../flag.ts';
import { type CountedReason, REASON_SLOT, type ReasonCounts, reasonCounts } from './flag-usage-tally.ts';
import { ofrepEvaluation, ofrepPayloadEvaluation, PAYLOAD_SUFFIX } from './ofrep.answers.ts';

// One environment's immutable snapshot (Flipt's shape; docs/adr/0026): the flags as loaded, compiled by
// the targeting engine, an explicit version of that configuration, and a cache of ready answers (bytes
// and ETags) for every read that does not depend on a context: GET /v1/flags... (which never evaluate:
// a flag with rules shows its default serve, docs/adr/0025) and the OFREP evaluations of flags whose
// answer is the same for every context. Only flags with targeting are evaluated per request.
//
// A rebuild after a change costs what changed (docs/adr/0028): the store hands back the same Flag
// object for a row whose columns are all unchanged (FlagStore.listEnvironmentFlags with the previous
// flags), and everything derived from one flag is kept per Flag object (its engine input, its /v1 list
// element) or per compiled flag (its OFREP entries, with their ready answers and the answers of its
// outcomes), so that only changed flags, and the flags using a changed segment or prerequisite, are
// compiled and serialized again. Nothing is keyed by time: a stale part can only come back for
// identical content.

/** A ready answer: status, exact body (as text and as the UTF-8 bytes sent) and strong ETag. */
export interface CachedAnswer {
  readonly status: number;
  readonly body: string;
  /** Encoded once, so that no read pays for turning a large list into bytes again. */
  readonly bytes: Buffer;
  readonly etag: string;
}

/** A GET /v1/flags/{slug} answer, with the reason slot it is counted with (v1ReasonOf). */
export interface FlagAnswer extends CachedAnswer {
  readonly reason: number;
}

/**
 * The reason a `/v1` read of a flag is counted with (metrics): `/v1` never evaluates, it serves the
 * default serve (docs/adr/0025), so STATIC, or DISABLED for a flag switched off in flagd's sense (the
 * reason OFREP answers it with too).
 */
export function v1ReasonOf(flag: Flag): CountedReason {
  return flag.targeting.state === 'DISABLED' ? 'DISABLED' : 'STATIC';
}

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
  /** GET /v1/flags/{slug} by slug, serialized on a slug's first read (most of a large environment's flags are never read alone). */
  readonly single: SingleAnswers;
  readonly list: CachedAnswer;
  /** What a read of the list counts as, by reason (v1ReasonOf of each flag); previewReasons likewise for the preview list. */
  readonly listReasons: ReasonCounts;
  readonly previewReasons: ReasonCounts;
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
  /** The bulk answer's flags in order: ready, or to evaluate for the context. */
  readonly bulkParts: readonly OfrepEntry[];
  /**
   * The reason counts of the flags whose OFREP answer is ready (the same for every context): what a bulk
   * read counts as when ofrepBulk is set, and the part of it that needs no evaluation otherwise.
   */
  readonly readyReasons: ReasonCounts;
  /** What follows the flags in the bulk answer: `,"metadata":...,"eventStreams":...}`. */
  readonly bulkTail: string;
  /** The project's segments as compiled, kept so that the next snapshot recognises unchanged ones by identity. */
  readonly segments: readonly Segment[];
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

/**
 * The version of a configuration, without serializing every flag's targeting again: the /v1 list's ETag
 * (every public field), each flag's id and updatedAt (every write of a flag, targeting included, sets
 * it) and the segments. Two writes of one flag in the same millisecond that leave its public fields
 * alike would share a version; the version only spares refetches a reload (the change feed still
 * replaces the snapshot), so that costs at most one stale refetch answer.
 */
function versionOf(flags: readonly Flag[], listEtag: string, segments: readonly Segment[]): string {
  const hash = createHash('sha1').update(listEtag);
  for (const flag of flags) hash.update(`\n${flag.id}\t${flag.updatedAt}`);
  if (segments.length > 0) hash.update(JSON.stringify(segments));
  return hash.digest('base64url');
}

/** The single-flag answers of a snapshot, each serialized once, on its first read (or kept from the last snapshot for the same Flag). */
export class SingleAnswers {
  private readonly answers = new Map<string, { flag: Flag; answer: FlagAnswer }>();

  /** `previous`: the last snapshot's answers, whose unchanged flags' answers are taken over (copied: no chain of snapshots is kept alive). */
  constructor(
    private readonly bySlug: ReadonlyMap<string, Flag>,
    previous?: SingleAnswers,
  ) {
    if (previous) for (const [slug, known] of previous.answers) if (bySlug.get(slug) === known.flag) this.answers.set(slug, known);
  }

  get(slug: string): FlagAnswer | undefined {
    let cached = this.answers.get(slug);
    if (cached) return cached.answer;
    const flag = this.bySlug.get(slug);
    if (!flag) return undefined;
    cached = { flag, answer: { ...answer(200, publicFlag(flag)), reason: REASON_SLOT[v1ReasonOf(flag)] } };
    this.answers.set(slug, cached);
    return cached.answer;
  }
}

/** What a snapshot derives from one Flag object alone, kept as long as the object (the store reuses it for an unchanged row). */
interface FlagParts {
  readonly targeted: TargetedFlag;
  /** Its element of GET /v1/flags, as JSON. */
  readonly listed: string;
  readonly updatedSeconds: number;
}

const partsOfFlag = new WeakMap<Flag, FlagParts>();

function partsOf(flag: Flag): FlagParts {
  let parts = partsOfFlag.get(flag);
  if (!parts) {
    parts = { targeted: targetedFlag(flag), listed: JSON.stringify(listedFlag(flag)), updatedSeconds: Math.floor(Date.parse(flag.updatedAt) / 1000) };
    partsOfFlag.set(flag, parts);
  }
  return parts;
}

/** The segments, with each one equal to a segment of the last snapshot replaced by that object (so that compiled flags using it are kept by identity). */
function keptSegments(segments: readonly Segment[], previous: readonly Segment[] | undefined): Segment[] {
  if (!previous || previous.length === 0) return [...segments];
  const byKey = new Map(previous.map((s) => [s.key, s]));
  return segments.map((s) => {
    const old = byKey.get(s.key);
    return old !== undefined && sameJson(old, s) ? old : s;
  });
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
  /** The snapshot this one replaces: unchanged flags are not compiled or serialized again. */
  previous?: EnvironmentSnapshot;
}

export function buildSnapshot(env: EnvironmentFlags, { render, streamUri, previous }: SnapshotOptions = {}): EnvironmentSnapshot {
  const flags = [...env.flags].sort(byNewest);
  const segments = keptSegments(env.segments, previous?.segments);
  const compiled = compileEnvironment(
    flags.map((f) => partsOf(f).targeted),
    segments,
    { previous: previous?.compiled },
  );
  const bySlug = new Map<string, Flag>();
  const ofrep = new Map<string, OfrepEntry>();
  const bulkParts: OfrepEntry[] = [];
  const listed: string[] = [];
  let lastModified = 0;
  let contextFree = true;
  const readyReasons = reasonCounts([]);
  for (const flag of flags) {
    bySlug.set(flag.slug, flag);
    const parts = partsOf(flag);
    listed.push(parts.listed);
    const payloadKey = `${flag.slug}${PAYLOAD_SUFFIX}`;
    const token = compiled.compiledOf(flag.slug)!;
    const old = previous?.ofrep.get(flag.slug);
    let value: OfrepEntry;
    let payload: OfrepEntry;
    if (old !== undefined && old.flag === flag && old.compiled === token) {
      value = old;
      payload = previous!.ofrep.get(payloadKey)!;
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
    ofrep.set(flag.slug, value);
    ofrep.set(payloadKey, payload);
    bulkParts.push(value, payload);
    if (parts.updatedSeconds > lastModified) lastModified = parts.updatedSeconds;
  }
  const previewFlags = flags.filter((f) => f.isPreview);
  const tail: Record<string, unknown> = { metadata: { flagCount: flags.length } };
  if (streamUri) tail.eventStreams = [{ type: 'sse', endpoint: { requestUri: streamUri }, inactivityDelaySec: 120 }];
  const bulkTail = `,${JSON.stringify(tail).slice(1)}`;
  const list = answerOfBody(200, `{"flags":[${listed.join(',')}]}`);
  return {
    environmentId: env.environmentId,
    version: versionOf(flags, list.etag, env.segments),
    flags,
    compiled,
    single: new SingleAnswers(bySlug, previous?.single),
    list,
    listReasons: reasonCounts(flags.map(v1ReasonOf)),
    previewReasons: reasonCounts(previewFlags.map(v1ReasonOf)),
    preview: previewFlags.length === 0 || render ? previewAnswer(previewFlags, render ?? (() => '')) : undefined,
    previewFlags,
    ofrep,
    ofrepBulk: contextFree
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
    segments,
    lastModified,
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

export function previewAnswer(previewFlags: readonly Flag[], render: (doc: unknown) => string): CachedAnswer {
  return answer(200, { flags: previewFlags.map((f) => previewFlag(f, render(f.previewContent))) });
}
