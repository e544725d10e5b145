import { createHash } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { compileEnvironment, type CompiledEnvironment, type Segment, type TargetedFlag } from '../targeting/index.ts';
import { sameJson } from '../targeting/engine.ts';
import { byNewest, type Flag, targetedFlag } from '../flags/flag.ts';
import { buildOfrepAnswers, type OfrepAnswers } from './ofrep.answers.ts';
import { buildV1Answers, type V1Answers } from './v1.answers.ts';

// One environment's immutable snapshot (Flipt's shape; docs/adr/0026): the flags as loaded, compiled by
// the targeting engine, an explicit version of that configuration, and one cache of ready answers (bytes
// and ETags) per read surface for every read that does not depend on a context: GET /v1/flags...
// (v1.answers.ts; they never evaluate: a flag with rules shows its default serve, docs/adr/0025) and
// the OFREP evaluations of flags whose answer is the same for every context (ofrep.answers.ts). Only
// flags with targeting are evaluated per request.
//
// A rebuild after a change costs what changed (docs/adr/0028): the store hands back the same Flag
// object for a row whose columns are all unchanged (FlagStore.listEnvironmentFlags with the previous
// flags), and everything derived from one flag is kept per Flag object (its engine input here, its /v1 list
// element in v1.answers.ts) or per compiled flag (its OFREP entries, with their ready answers and the answers of its
// outcomes), so that only changed flags, and the flags using a changed segment or prerequisite, are
// compiled and serialized again. Nothing is keyed by time: a stale part can only come back for
// identical content.

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
  /** The project's segments as compiled, kept so that the next snapshot recognises unchanged ones by identity. */
  readonly segments: readonly Segment[];
  /** The newest updatedAt of the environment's flags, as Unix seconds (0 without flags). */
  readonly lastModified: number;
  /** The answers of GET /v1/flags... (v1.answers.ts). */
  readonly v1: V1Answers;
  /** The answers of OFREP (ofrep.answers.ts). */
  readonly ofrep: OfrepAnswers;
}

export interface EnvironmentFlags {
  environmentId: string;
  flags: Flag[];
  /** The project's segments, which rules of these flags may reference (issue 18). */
  segments: Segment[];
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

/** What a snapshot derives from one Flag object alone, kept as long as the object (the store reuses it for an unchanged row). */
interface FlagParts {
  readonly targeted: TargetedFlag;
  readonly updatedSeconds: number;
}

const partsOfFlag = new WeakMap<Flag, FlagParts>();

function partsOf(flag: Flag): FlagParts {
  let parts = partsOfFlag.get(flag);
  if (!parts) {
    parts = { targeted: targetedFlag(flag), updatedSeconds: Math.floor(Date.parse(flag.updatedAt) / 1000) };
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

export interface SnapshotOptions {
  /** Turns preview content into HTML; without it, the preview answer is left to build later. */
  render?: (doc: unknown) => string;
  /** The path and query of the environment's OFREP event stream, advertised in the bulk answer. */
  streamUri?: string;
  /** The snapshot this one replaces: unchanged flags are not compiled or serialized again. */
  previous?: EnvironmentSnapshot;
  /** The clock port, for the engine's conditions that compare with now; the system clock when omitted. */
  clock?: Clock;
}

export function buildSnapshot(env: EnvironmentFlags, { render, streamUri, previous, clock }: SnapshotOptions = {}): EnvironmentSnapshot {
  const flags = [...env.flags].sort(byNewest);
  const segments = keptSegments(env.segments, previous?.segments);
  const compiled = compileEnvironment(
    flags.map((f) => partsOf(f).targeted),
    segments,
    { previous: previous?.compiled, ...(clock ? { now: () => clock().getTime() } : {}) },
  );
  let lastModified = 0;
  for (const flag of flags) {
    const { updatedSeconds } = partsOf(flag);
    if (updatedSeconds > lastModified) lastModified = updatedSeconds;
  }
  const v1 = buildV1Answers(flags, render, previous?.v1);
  return {
    environmentId: env.environmentId,
    version: versionOf(flags, v1.list.etag, env.segments),
    flags,
    compiled,
    segments,
    lastModified,
    v1,
    ofrep: buildOfrepAnswers(flags, compiled, streamUri, previous?.ofrep),
  };
}
