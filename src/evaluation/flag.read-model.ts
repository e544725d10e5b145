import type { Clock } from '../clock.ts';
import type { ExposurePort } from './exposure-port.ts';
import { loadPreviewRenderer } from '../flags/preview-content.ts';
import type { FlagChange } from './flag-changes.ts';
import { FlagUsageTally } from './flag-usage-tally.ts';
import type { CachedAnswer } from './cached-answer.ts';
import { buildSnapshot, type EnvironmentFlags, type EnvironmentSnapshot } from './flag.snapshot.ts';
import { previewAnswer } from './v1.answers.ts';

export { answer, type CachedAnswer } from './cached-answer.ts';
export { buildSnapshot, type EnvironmentFlags, type EnvironmentSnapshot, type SnapshotOptions } from './flag.snapshot.ts';
export type { OfrepEntry } from './ofrep.answers.ts';
export { flagNotFoundAnswer } from './v1.answers.ts';

// The hot path. Client reads bypass service and store layering on purpose (style.md "Layers"): per
// environment one immutable snapshot (flag.snapshot.ts), loaded on first read and replaced, never
// changed, when an admin write announces a change (FlagChanges) for its environment. No read runs SQL.

export interface FlagReadModelSource {
  /**
   * The environment for a pair of client keys with all its flags, or undefined when unknown. `previous`:
   * the last snapshot of these keys, whose Flag objects may be handed back for unchanged rows.
   */
  loadEnvironment(projectKey: string, environmentKey: string, previous?: EnvironmentSnapshot): Promise<EnvironmentFlags | undefined>;
}

/** What the metrics hear from the read path (src/metrics/metrics.ts). */
export interface ReadModelObserver {
  snapshotRebuilt(seconds: number): void;
  changePropagated(seconds: number): void;
}

/** Most unknown key pairs remembered at once, so random keys cannot grow memory without bound. */
const MAX_UNKNOWN = 10_000;
/** A snapshot is reloaded for a client's newer flagConfigEtag at most this often. */
const REFRESH_INTERVAL_MS = 1000;

export class FlagReadModel {
  private readonly snapshots = new Map<string, EnvironmentSnapshot>();
  private readonly unknown = new Set<string>();
  private readonly loading = new Map<string, Promise<EnvironmentSnapshot | undefined>>();
  private readonly keyOfEnvironment = new Map<string, string>();
  /** When each key pair was last reloaded for a client's newer flagConfigEtag. */
  private readonly refreshed = new Map<string, number>();
  /**
   * Bumped by every change; a load that overlapped a change is answered to the reads that were waiting
   * for it, but neither kept nor shared with a read that comes after the change (apply drops it from
   * `loading`).
   */
  private generation = 0;
  /**
   * Each key pair's last snapshot, kept past a change so that a rebuild loads, compiles and serializes
   * only what changed (flag.snapshot.ts). Never served once replaced or dropped.
   */
  private readonly last = new Map<string, EnvironmentSnapshot>();

  /** Evaluations answered by this process, counted in memory (flag-usage-tally.ts); usage/flag-usage.service.ts flushes them. */
  readonly usage = new FlagUsageTally();
  /** Told how long each snapshot took to load and compile, and how long changes took to arrive from other instances (metrics). */
  observer: ReadModelObserver | undefined = undefined;
  /** Server-side exposures of running experiments (issue 32), answered by experiments/; none: nothing recorded. */
  exposures: ExposurePort | undefined = undefined;

  /** Told the id of every environment whose flags may have changed; `undefined`: all of them. */
  private readonly watchers: Array<(environmentId: string | undefined) => void> = [];

  constructor(
    private readonly source: FlagReadModelSource,
    /** The OFREP event stream of a pair of keys (issue 10); no stream is advertised without it. */
    private readonly streamUriOf?: (projectKey: string, environmentKey: string) => string,
    /** The clock port, for the engine's conditions that compare with now (the system clock when omitted). */
    private readonly clock?: Clock,
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
    const started = performance.now();
    try {
      const previous = this.last.get(key);
      const env = await this.source.loadEnvironment(projectKey, environmentKey, previous);
      const snapshot = env ? buildSnapshot(env, { streamUri: this.streamUriOf?.(projectKey, environmentKey), previous, clock: this.clock }) : undefined;
      if (snapshot) this.observer?.snapshotRebuilt((performance.now() - started) / 1000);
      if (generation === this.generation) {
        if (snapshot) {
          this.snapshots.set(key, snapshot);
          this.last.set(key, snapshot);
          this.keyOfEnvironment.set(snapshot.environmentId, key);
        } else {
          if (this.unknown.size >= MAX_UNKNOWN) this.unknown.clear();
          this.unknown.add(key);
        }
      }
      return snapshot;
    } finally {
      // After a change, `loading` no longer holds this load, and may hold a newer one for the same key.
      if (generation === this.generation) this.loading.delete(key);
    }
  }

  /** The GET /flags/preview answer of a snapshot, rendering its preview content on first use. */
  async preview(snapshot: EnvironmentSnapshot): Promise<CachedAnswer> {
    if (snapshot.v1.preview) return snapshot.v1.preview;
    const { renderPreviewContent } = await loadPreviewRenderer();
    snapshot.v1.preview ??= previewAnswer(snapshot.v1.previewFlags, renderPreviewContent);
    return snapshot.v1.preview;
  }

  /** Applies a change announced by a write, on this instance or (through a listener) another one. */
  apply(change: FlagChange): void {
    this.generation++;
    // A load under way began before this change and may hold the flags as they were: a read from now
    // on (the write's own caller, once answered) starts a new one rather than waiting for it.
    this.loading.clear();
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
    this.loading.clear();
    this.snapshots.clear();
    this.last.clear();
    this.unknown.clear();
    this.keyOfEnvironment.clear();
    this.tell(undefined);
  }
}
