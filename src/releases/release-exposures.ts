import type { Db } from '../db/database.ts';
import type { ExposurePort } from '../evaluation/index.ts';
import type { DomainEvents } from '../events/index.ts';
import { releaseRuleId } from './release.ts';
import type { ReleaseStore } from './release.store.ts';

export interface ReleaseExposuresDeps {
  db: Db;
  store: Pick<ReleaseStore, 'listActiveRules'>;
  /** The experiments' port (ExposureRecorder): what it measures, and where every exposure is buffered. */
  inner: ExposurePort;
  clock: () => number;
  log: { warn(obj: object, msg: string): void };
  /** `release.changed` after its commit: a release of this process started or ended. */
  events: Pick<DomainEvents, 'onCommit'>;
  /** Ms after which the active releases are read again (started or ended by another instance or worker). */
  refreshMs?: number;
}

/**
 * Server-side exposures of releases (issue 33): the read path's ExposurePort, around the experiments'
 * own. A single-flag OFREP evaluation that an active release's split serves records an exposure, as
 * one of a running experiment's split does, so that metric guardrails count the users OFREP serves,
 * not only those whose client sends `/v1/track` exposures. Which flags have an active release is kept
 * in memory: read again after this process starts or ends a release (`release.changed`), and at most every
 * `refreshMs` for the other processes' (a read started by an evaluation that finds it old, which does
 * not wait for it), so that an evaluation pays two map lookups. A flag that has both a running
 * experiment and an active release records for the experiment's rule.
 */
export class ReleaseExposures implements ExposurePort {
  private rules = new Map<string, Map<string, string>>();
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;

  constructor(private readonly deps: ReleaseExposuresDeps) {
    deps.events.onCommit('release.changed', () => this.refresh());
  }

  measuredRule(environmentId: string, flagKey: string): string | undefined {
    const measured = this.deps.inner.measuredRule(environmentId, flagKey);
    if (measured !== undefined) return measured;
    if (this.deps.clock() - this.readAt > (this.deps.refreshMs ?? 5000)) void this.refresh();
    return this.rules.get(environmentId)?.get(flagKey);
  }

  record(environmentId: string, flagKey: string, variant: string, targetingKey: string): void {
    this.deps.inner.record(environmentId, flagKey, variant, targetingKey);
  }

  /** Reads the active releases' rules again (one read at a time; a read asked meanwhile waits for it). */
  refresh(): Promise<void> {
    this.readAt = this.deps.clock();
    this.reading ??= this.read().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async read(): Promise<void> {
    try {
      const next = new Map<string, Map<string, string>>();
      for (const r of await this.deps.store.listActiveRules(this.deps.db)) {
        const flags = next.get(r.environmentId) ?? new Map<string, string>();
        flags.set(r.flagSlug, releaseRuleId(r.id));
        next.set(r.environmentId, flags);
      }
      this.rules = next;
    } catch (error) {
      this.deps.log.warn({ err: error }, 'active releases could not be read; their exposures keep the last known ones');
    }
  }
}
