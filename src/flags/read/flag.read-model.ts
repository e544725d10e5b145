import { createHash } from 'node:crypto';
import { message } from '../../errors.ts';
import { byNewest, type Flag, listedFlag, previewFlag, publicFlag } from '../flag.ts';
import type { FlagChange } from './flag-changes.ts';
import { loadPreviewRenderer } from '../preview-content.ts';

// The hot path. Client reads bypass service and store layering on purpose (style.md "Layers"):
// each environment's answers are serialized once, with their ETags, and served from memory until an
// admin write announces a change (FlagChanges) for that environment.

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
  readonly single: ReadonlyMap<string, CachedAnswer>;
  readonly list: CachedAnswer;
  /**
   * GET /flags/preview, once built. Rendering preview content needs the preview renderer, which is
   * loaded on first use, so an environment with preview flags builds this answer on its first preview
   * read (FlagReadModel.preview), not when its flags are loaded.
   */
  preview: CachedAnswer | undefined;
  readonly previewFlags: readonly Flag[];
}

export interface EnvironmentFlags {
  environmentId: string;
  flags: Flag[];
}

export interface FlagReadModelSource {
  /** The environment for a pair of client keys with all its flags, or undefined when unknown. */
  loadEnvironment(projectKey: string, environmentKey: string): Promise<EnvironmentFlags | undefined>;
}

/** Most unknown key pairs remembered at once, so random keys cannot grow memory without bound. */
const MAX_UNKNOWN = 10_000;

function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

export function answer(status: number, value: unknown): CachedAnswer {
  const body = JSON.stringify(value);
  return { status, body, bytes: Buffer.from(body), etag: etagOf(body) };
}

/** The single-flag 404 of the specification (enabled:false so clients treat the flag as off). */
export function flagNotFoundAnswer(slug: string): CachedAnswer {
  return answer(404, { enabled: false, error: true, message: message('flagNotFound', { slug }) });
}

/** `render` turns preview content into HTML; without it, the preview answer is left to build later. */
export function buildSnapshot(env: EnvironmentFlags, render?: (doc: unknown) => string): EnvironmentSnapshot {
  const flags = [...env.flags].sort(byNewest);
  const single = new Map<string, CachedAnswer>();
  for (const flag of flags) single.set(flag.slug, answer(200, publicFlag(flag)));
  const previewFlags = flags.filter((f) => f.isPreview);
  return {
    environmentId: env.environmentId,
    single,
    list: answer(200, { flags: flags.map(listedFlag) }),
    preview: previewFlags.length === 0 || render ? previewAnswer(previewFlags, render ?? (() => '')) : undefined,
    previewFlags,
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
  /** Bumped by every change; a load that overlapped a change is answered but not kept. */
  private generation = 0;

  constructor(private readonly source: FlagReadModelSource) {}

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

  private async load(key: string, projectKey: string, environmentKey: string): Promise<EnvironmentSnapshot | undefined> {
    const generation = this.generation;
    try {
      const env = await this.source.loadEnvironment(projectKey, environmentKey);
      const snapshot = env ? buildSnapshot(env) : undefined;
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
  }

  /** Forgets everything, for the periodic re-check and after a lost change feed. */
  clear(): void {
    this.generation++;
    this.snapshots.clear();
    this.unknown.clear();
    this.keyOfEnvironment.clear();
  }
}
