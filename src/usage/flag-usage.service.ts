import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { DomainEvents } from '../events/index.ts';
import type { Project, ProjectService } from '../projects/index.ts';
import type { FlagStore } from '../flags/index.ts';
import type { FlagUsageTally } from '../evaluation/index.ts';
import { daysUpTo, hourOf, sinceDays } from './flag-usage.ts';
import type { FlagUsageStore, UsageIncrement } from './flag-usage.store.ts';

export interface FlagUsageDeps {
  db: Db;
  store: FlagUsageStore;
  projects: Pick<ProjectService, 'getProject'>;
  /** The project's flags, so that flags never evaluated are listed too. */
  flags: Pick<FlagStore, 'listProjectFlags' | 'slugExistsInProject'>;
  /** The read path's in-memory counters (flag-usage-tally.ts). */
  tally: FlagUsageTally;
  /** Forgets the usage of a deleted flag in its delete's transaction. */
  events: DomainEvents;
  clock: () => Date;
  /** Buckets older than this many days are deleted by prune(). */
  retentionDays: number;
  log: { warn(obj: object, msg: string): void };
}

/** One flag's evaluations per environment and UTC day, for the dashboard's chart. */
export interface FlagUsageSeries {
  slug: string;
  days: string[];
  environments: Array<{ key: string; name: string; lastEvaluatedAt: string | null; evaluations: number[] }>;
}

/** A project's flags by use over a period, most used first. */
export interface ProjectUsage {
  days: number;
  flags: Array<{ slug: string; evaluations: number; lastEvaluatedAt: string | null; environments: Array<{ key: string; evaluations: number }> }>;
}

/**
 * Flag usage (issue 23): moves the read path's in-memory counts to hourly rows in batches (never a write
 * per read), answers the admin API's usage questions and prunes buckets past the retention period.
 * A flush that fails keeps its counts for the next one. The scheduler runs `flush()` every
 * FLAGPOST_USAGE_FLUSH_MS, cut short at the hour's edges (`nextFlushDelay`), and once more at shutdown
 * (src/compose/jobs.ts).
 */
export class FlagUsage {
  /** The flush under way, so that flushes never overlap. */
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: FlagUsageDeps) {
    deps.events.onTransaction('flag.deleted', async (event, trx) => {
      await deps.store.deleteFlag(trx, event.environmentIds, event.slug);
    });
    deps.events.onCommit('flag.deleted', (event) => deps.tally.forget(event.environmentIds, event.slug));
  }

  /** Writes the evaluations counted since the last flush into the bucket of the current hour. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writeCounts());
    return this.flushing;
  }

  private async writeCounts(): Promise<void> {
    const counts = this.deps.tally.drain();
    if (counts.size === 0) return;
    const now = this.deps.clock();
    const hour = hourOf(now);
    const at = now.toISOString();
    const increments: UsageIncrement[] = [];
    for (const [environmentId, flags] of counts) {
      for (const [slug, evaluations] of flags) if (evaluations > 0) increments.push({ environmentId, slug, hour, evaluations, at });
    }
    try {
      await this.deps.db.transaction().execute((trx) => this.deps.store.add(trx, increments));
    } catch (error) {
      // The database is away: nothing was written (one transaction), the next flush carries these.
      this.deps.tally.restore(counts);
      this.deps.log.warn({ err: error, rows: increments.length }, 'flag usage flush failed, keeping the counts for the next one');
    }
  }

  /** Deletes the buckets older than the retention period; returns how many (the retention job calls it). */
  async prune(): Promise<number> {
    const before = sinceDays(this.deps.clock(), this.deps.retentionDays + 1);
    return this.deps.store.prune(this.deps.db, before);
  }

  /** The last evaluation of each flag in each environment of a project, as `environmentId\nslug` -> ISO time. */
  async lastEvaluated(project: Project): Promise<Map<string, string>> {
    return this.deps.store.lastEvaluated(
      this.deps.db,
      project.environments.map((e) => e.id),
    );
  }

  /** When counting began on this database: the stale rule "not evaluated for N days" waits N days after it. */
  async countingSince(): Promise<string | undefined> {
    return this.deps.store.countingSince(this.deps.db);
  }

  /** One flag's evaluations per environment and UTC day over the last `days` days (today included). */
  async flagSeries(projectKey: string, slug: string, days: number): Promise<FlagUsageSeries> {
    const project = await this.deps.projects.getProject(projectKey);
    if (!(await this.deps.flags.slugExistsInProject(this.deps.db, project.id, slug))) {
      throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
    }
    const now = this.deps.clock();
    const ids = project.environments.map((e) => e.id);
    const [rows, last] = await Promise.all([
      this.deps.store.dailyOfFlag(this.deps.db, ids, slug, sinceDays(now, days)),
      this.deps.store.lastEvaluated(this.deps.db, ids),
    ]);
    const dayList = daysUpTo(now, days);
    const index = new Map(dayList.map((d, i) => [d, i]));
    return {
      slug,
      days: dayList,
      environments: project.environments.map((env) => {
        const evaluations = dayList.map(() => 0);
        for (const row of rows) {
          const i = index.get(row.day);
          if (row.environmentId === env.id && i !== undefined) evaluations[i] = row.evaluations;
        }
        return { key: env.key, name: env.name, lastEvaluatedAt: last.get(`${env.id}\n${slug}`) ?? null, evaluations };
      }),
    };
  }

  /** Every flag of the project with its evaluations over the last `days` days (today included), most evaluated first. */
  async projectUsage(projectKey: string, days: number): Promise<ProjectUsage> {
    const project = await this.deps.projects.getProject(projectKey);
    const ids = project.environments.map((e) => e.id);
    const [flags, rows, last] = await Promise.all([
      this.deps.flags.listProjectFlags(this.deps.db, project.id),
      this.deps.store.totals(this.deps.db, ids, sinceDays(this.deps.clock(), days)),
      this.deps.store.lastEvaluated(this.deps.db, ids),
    ]);
    const counted = new Map(rows.map((r) => [`${r.environmentId}\n${r.slug}`, r.evaluations]));
    const bySlug = new Map<string, ProjectUsage['flags'][number]>();
    for (const flag of flags) {
      const entry = bySlug.get(flag.slug) ?? { slug: flag.slug, evaluations: 0, lastEvaluatedAt: null, environments: [] };
      bySlug.set(flag.slug, entry);
    }
    for (const env of project.environments) {
      for (const entry of bySlug.values()) {
        const id = `${env.id}\n${entry.slug}`;
        const evaluations = counted.get(id) ?? 0;
        const at = last.get(id) ?? null;
        entry.evaluations += evaluations;
        if (at !== null && (entry.lastEvaluatedAt === null || at > entry.lastEvaluatedAt)) entry.lastEvaluatedAt = at;
        entry.environments.push({ key: env.key, evaluations });
      }
    }
    const sorted = [...bySlug.values()].sort((a, b) => b.evaluations - a.evaluations || (a.slug < b.slug ? -1 : 1));
    return { days, flags: sorted };
  }
}
