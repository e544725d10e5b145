import type { Db } from '../db/database.ts';
import type { ExposurePort } from '../evaluation/index.ts';
import type { DomainEvents } from '../events/index.ts';
import { releaseRuleId } from './release.ts';
import type { ReleaseStore } from './release.store.ts';

/** Targeting keys remembered per release and variant (about 100 bytes each). */
const MAX_SEEN_PER_VARIANT = 500_000;

export interface ReleaseExposuresDeps {
  db: Db;
  store: Pick<ReleaseStore, 'listActiveRules'>;
  /** The experiments' port (ExposureRecorder): what it measures, and where every exposure is buffered. */
  inner: ExposurePort;
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
 * not wait for it), so that an evaluation pays a few map lookups. A flag that has both a running
 * experiment and an active release records for the experiment's rule.
 */
export class ReleaseExposures implements ExposurePort {
  private rules = new Map<string, Map<string, string>>();
  /** Per active release's rule, per variant, the targeting keys whose exposure this process recorded. */
  private seen = new Map<string, Map<string, Set<string>>>();
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;

  constructor(private readonly deps: ReleaseExposuresDeps) {
    deps.events.onCommit('release.changed', () => this.refresh());
  }

  measuredRule(environmentId: string, flagKey: string): string | undefined {
    const measured = this.deps.inner.measuredRule(environmentId, flagKey);
    if (measured !== undefined) return measured;
    // Wall-clock time on purpose: how old this process's copy is, whatever clock the app is given.
    if (Date.now() - this.readAt > (this.deps.refreshMs ?? 5000)) void this.refresh();
    return this.rules.get(environmentId)?.get(flagKey);
  }

  /**
   * A release's guardrails count users by their first exposure, so a user's exposure to a release is
   * recorded once per process and variant (not once a second, as the experiments' recorder does): the
   * cost of a release on an evaluation is then two map lookups once its users have been seen.
   */
  record(environmentId: string, flagKey: string, variant: string, targetingKey: string): void {
    const rule = this.rules.get(environmentId)?.get(flagKey);
    if (rule === undefined || this.deps.inner.measuredRule(environmentId, flagKey) !== undefined) {
      this.deps.inner.record(environmentId, flagKey, variant, targetingKey);
      return;
    }
    let variants = this.seen.get(rule);
    if (!variants) this.seen.set(rule, (variants = new Map()));
    let users = variants.get(variant);
    if (!users) variants.set(variant, (users = new Set()));
    if (users.has(targetingKey)) return;
    // A bound on memory: past it the users are recorded once more (the guardrails count them once).
    if (users.size >= MAX_SEEN_PER_VARIANT) users.clear();
    users.add(targetingKey);
    this.deps.inner.record(environmentId, flagKey, variant, targetingKey);
  }

  /** Reads the active releases' rules again (one read at a time; a read asked meanwhile waits for it). */
  refresh(): Promise<void> {
    this.readAt = Date.now();
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
      const active = new Set([...next.values()].flatMap((flags) => [...flags.values()]));
      for (const rule of this.seen.keys()) if (!active.has(rule)) this.seen.delete(rule);
    } catch (error) {
      this.deps.log.warn({ err: error }, 'active releases could not be read; their exposures keep the last known ones');
    }
  }
}
