import { createHash } from 'node:crypto';
import { message } from '../../errors.ts';
import type { Segment } from '../../targeting/targeting.ts';
import { byNewest, type Flag, listedFlag, previewFlag, publicFlag } from '../flag.ts';
import type { FlagChange } from './flag-changes.ts';
import { ofrepEvaluation, ofrepPayloadEvaluation, PAYLOAD_SUFFIX } from './ofrep.answers.ts';
import { loadPreviewRenderer } from '../preview-content.ts';

// The hot path. Client reads bypass service and store layering on purpose (style.md "Layers"):
// per environment one immutable snapshot (Flipt's shape): the flags as loaded, an explicit version of
// that configuration, and a cache of ready answers (bytes and ETags) for every read that needs no
// context: GET /v1/flags..., and OFREP evaluations of flags without targeting. A snapshot is replaced,
// never changed, when an admin write announces a change (FlagChanges) for its environment.

/** A ready answer: status, exact body (as text and as the UTF-8 bytes sent) and strong ETag. */
export interface CachedAnswer {
  readonly status: number;
  readonly body: string;
  /** Encoded once, so that no read pays for turning a large list into bytes again. */
  readonly bytes: Buffer;
  readonly etag: string;
}

export interface EnvironmentSnapshot {
  readonly environmentId: string;
  /**
   * The version of the environment's configuration: a hash of its flags, the same on every instance
   * that loaded the same rows. OFREP event streams announce it (`etag`) and clients name it back
   * (`flagConfigEtag`); it is not an ETag of any answer, since OFREP answers depend on the context.
   */
  readonly version: string;
  /** The environment's flags, newest first. */
  readonly flags: readonly Flag[];
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
  readonly ofrep: ReadonlyMap<string, CachedAnswer>;
  /** OFREP bulk evaluation of every flag, with the environment's event stream, for any context. */
  readonly ofrepBulk: CachedAnswer;
  /** The newest updatedAt of the environment's flags, as Unix seconds (0 without flags). */
  readonly lastModified: number;
}

export interface EnvironmentFlags {
  environmentId: string;
  flags: Flag[];
  /** The project's segments, which rules of these flags may reference (issue 18). */
  segments: Segment[];
}

export interface FlagReadModelSource {
  /** The environment for a pair of client keys with all its flags, or undefined when unknown. */
  loadEnvironment(projectKey: string, environmentKey: string): Promise<EnvironmentFlags | undefined>;
}

/** Most unknown key pairs remembered at once, so random keys cannot grow memory without bound. */
const MAX_UNKNOWN = 10_000;
/** A snapshot is reloaded for a client's newer flagConfigEtag at most this often. */
const REFRESH_INTERVAL_MS = 1000;

function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

/** The version of a configuration: every field of every flag (updatedAt included), in snapshot order. */
function versionOf(flags: readonly Flag[]): string {
  return createHash('sha1').update(JSON.stringify(flags)).digest('base64url');
}

export function answer(status: number, value: unknown): CachedAnswer {
  const body = JSON.stringify(value);
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
}

export function buildSnapshot(env: EnvironmentFlags, { render, streamUri }: SnapshotOptions = {}): EnvironmentSnapshot {
  const flags = [...env.flags].sort(byNewest);
  const single = new Map<string, CachedAnswer>();
  const ofrep = new Map<string, CachedAnswer>();
  const evaluations: unknown[] = [];
  let lastModified = 0;
  for (const flag of flags) {
    single.set(flag.slug, answer(200, publicFlag(flag)));
    const evaluation = ofrepEvaluation(flag);
    const payload = ofrepPayloadEvaluation(flag);
    ofrep.set(flag.slug, answer(200, evaluation));
    ofrep.set(`${flag.slug}${PAYLOAD_SUFFIX}`, answer(200, payload));
    evaluations.push(evaluation, payload);
    lastModified = Math.max(lastModified, Math.floor(Date.parse(flag.updatedAt) / 1000));
  }
  const previewFlags = flags.filter((f) => f.isPreview);
  const bulk: Record<string, unknown> = { flags: evaluations, metadata: { flagCount: flags.length } };
  if (streamUri) bulk.eventStreams = [{ type: 'sse', endpoint: { requestUri: streamUri }, inactivityDelaySec: 120 }];
  return {
    environmentId: env.environmentId,
    version: versionOf(flags),
    flags,
    single,
    list: answer(200, { flags: flags.map(listedFlag) }),
    preview: previewFlags.length === 0 || render ? previewAnswer(previewFlags, render ?? (() => '')) : undefined,
    previewFlags,
    ofrep,
    ofrepBulk: answer(200, bulk),
    lastModified,
  };
}

function previewAnswer(previewFlags: readonly Flag[], render: (doc: unknown) => string): CachedAnswer {
  return answer(200, { flags: previewFlags.map((f) => previewFlag(f, render(f.previewContent))) });
}

export class FlagReadModel {
  private readonly snapshots = new Map<string, EnvironmentSnapshot>();
  private readonly unknown = new Set<string>();
  private readonly loading = new Map<string, Promise<EnvironmentSnapshot | undefined>>();
  private readonly keyOfEnvironment = new Map<string, string>();
  /** When each key pair was last reloaded for a client's newer flagConfigEtag. */
  private readonly refreshed = new Map<string, number>();
  /** Bumped by every change; a load that overlapped a change is answered but not kept. */
  private generation = 0;

  /** Told the id of every environment whose flags may have changed; `undefined`: all of them. */
  private readonly watchers: Array<(environmentId: string | undefined) => void> = [];

  constructor(
    private readonly source: FlagReadModelSource,
    /** The OFREP event stream of a pair of keys (issue 10); no stream is advertised without it. */
    private readonly streamUriOf?: (projectKey: string, environmentKey: string) => string,
  ) {}

  /** Calls `watcher` after every change applied to this read model (live updates, issue 10). */
  watch(watcher: (environmentId: string | undefined) => void): void {
    this.watchers.push(watcher);
  }

  private tell(environmentId: string | undefined): void {
    for (const watcher of this.watchers) watcher(environmentId);
  }

  /** The snapshot for a pair of client keys, or undefined when the keys are unknown. */
  get(projectKey: string, environmentKey: string): EnvironmentSnapshot | undefined | Promise<EnvironmentSnapshot | undefined> {
    const key = `${projectKey}\n${environmentKey}`;
    const hit = this.snapshots.get(key);
    if (hit) return hit;
    if (this.unknown.has(key)) return undefined;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.load(key, projectKey, environmentKey);
      this.loading.set(key, pending);
    }
    return pending;
  }

  /**
   * The snapshot, loaded again from the database when a client says (OFREP's `flagConfigEtag`, taken
   * from an event stream) that the flags are at another `version` than this instance's snapshot: on
   * PostgreSQL the event may come from an instance whose NOTIFY has not reached this one yet. At most
   * once a second per environment, so that made-up tags cannot turn reads into queries.
   */
  async refreshIfStale(projectKey: string, environmentKey: string, version: string): Promise<EnvironmentSnapshot | undefined> {
    const key = `${projectKey}\n${environmentKey}`;
    const current = await this.get(projectKey, environmentKey);
    if (!current || current.version === version) return current;
    const now = Date.now();
    if (now - (this.refreshed.get(key) ?? 0) < REFRESH_INTERVAL_MS) return current;
    if (this.refreshed.size >= MAX_UNKNOWN) this.refreshed.clear();
    this.refreshed.set(key, now);
    if (this.snapshots.get(key) === current) {
      this.snapshots.delete(key);
      this.keyOfEnvironment.delete(current.environmentId);
    }
    return this.get(projectKey, environmentKey);
  }

  private async load(key: string, projectKey: string, environmentKey: string): Promise<EnvironmentSnapshot | undefined> {
    const generation = this.generation;
    try {
      const env = await this.source.loadEnvironment(projectKey, environmentKey);
      const snapshot = env ? buildSnapshot(env, { streamUri: this.streamUriOf?.(projectKey, environmentKey) }) : undefined;
      if (generation === this.generation) {
        if (snapshot) {
          this.snapshots.set(key, snapshot);
          this.keyOfEnvironment.set(snapshot.environmentId, key);
        } else {
          if (this.unknown.size >= MAX_UNKNOWN) this.unknown.clear();
          this.unknown.add(key);
        }
      }
      return snapshot;
    } finally {
      this.loading.delete(key);
    }
  }

  /** The GET /flags/preview answer of a snapshot, rendering its preview content on first use. */
  async preview(snapshot: EnvironmentSnapshot): Promise<CachedAnswer> {
    if (snapshot.preview) return snapshot.preview;
    const { renderPreviewContent } = await loadPreviewRenderer();
    snapshot.preview ??= previewAnswer(snapshot.previewFlags, renderPreviewContent);
    return snapshot.preview;
  }

  /** Applies a change announced by a write, on this instance or (through a listener) another one. */
  apply(change: FlagChange): void {
    this.generation++;
    if (change.kind === 'keys') {
      this.unknown.clear();
      return;
    }
    const key = this.keyOfEnvironment.get(change.environmentId);
    if (key !== undefined) {
      this.snapshots.delete(key);
      this.keyOfEnvironment.delete(change.environmentId);
    }
    this.tell(change.environmentId);
  }

  /** Forgets everything, for the periodic re-check and after a lost change feed. */
  clear(): void {
    this.generation++;
    this.snapshots.clear();
    this.unknown.clear();
    this.keyOfEnvironment.clear();
    this.tell(undefined);
  }
}
