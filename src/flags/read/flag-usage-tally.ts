// Flag usage counting on the hot read path (issue 23, docs/adr/0035-usage-counting.md). Every answered
// read adds to these in-memory counters, never to the database: a single read is two Map lookups and an
// addition, a list read (OFREP bulk, GET /v1/flags, a flagd sync delivery) one lookup keyed by the array
// of flags it answered. The usage service (flags/usage/) drains them into hourly rows in batches.

/** Where a read was answered, for the counters by surface (metrics). */
export type ReadSurface = 'ofrep_single' | 'ofrep_bulk' | 'v1_single' | 'v1_list' | 'flagd_sync';

export const READ_SURFACES: readonly ReadSurface[] = ['ofrep_single', 'ofrep_bulk', 'v1_single', 'v1_list', 'flagd_sync'];

/** What a drain hands over: evaluations per environment id and flag slug since the last drain. */
export type DrainedUsage = Map<string, Map<string, number>>;

interface ListReads {
  readonly environmentId: string;
  readonly slugs: readonly { readonly slug: string }[];
  count: number;
}

export class FlagUsageTally {
  private singles: DrainedUsage = new Map();
  /** List reads keyed by the array of flags they answered (a snapshot's, so one entry per snapshot). */
  private lists = new Map<readonly { readonly slug: string }[], ListReads>();
  /** Reads per surface since start, never drained: the metrics read them. */
  readonly bySurface: Record<ReadSurface, number> = { ofrep_single: 0, ofrep_bulk: 0, v1_single: 0, v1_list: 0, flagd_sync: 0 };

  /** One evaluation of one flag. */
  one(surface: ReadSurface, environmentId: string, slug: string): void {
    this.bySurface[surface]++;
    let flags = this.singles.get(environmentId);
    if (flags === undefined) this.singles.set(environmentId, (flags = new Map()));
    flags.set(slug, (flags.get(slug) ?? 0) + 1);
  }

  /** One read of every flag in `flags` (a list or bulk answer): one evaluation of each. */
  all(surface: ReadSurface, environmentId: string, flags: readonly { readonly slug: string }[]): void {
    this.bySurface[surface]++;
    const known = this.lists.get(flags);
    if (known !== undefined) known.count++;
    else this.lists.set(flags, { environmentId, slugs: flags, count: 1 });
  }

  /** Forgets the counts not yet drained of a deleted flag, so that a flush does not bring it back. */
  forget(environmentIds: readonly string[], slug: string): void {
    for (const id of environmentIds) this.singles.get(id)?.delete(slug);
    for (const [flags, reads] of this.lists) {
      if (environmentIds.includes(reads.environmentId) && flags.some((f) => f.slug === slug)) {
        this.lists.delete(flags);
        this.lists.set(
          flags.filter((f) => f.slug !== slug),
          reads,
        );
      }
    }
  }

  /** The counts since the last drain, list reads spread over their flags; the tally starts again at zero. */
  drain(): DrainedUsage {
    const drained = this.singles;
    const lists = this.lists;
    this.singles = new Map();
    this.lists = new Map();
    for (const reads of lists.values()) {
      let flags = drained.get(reads.environmentId);
      if (flags === undefined) drained.set(reads.environmentId, (flags = new Map()));
      for (const { slug } of reads.slugs) flags.set(slug, (flags.get(slug) ?? 0) + reads.count);
    }
    return drained;
  }

  /** Puts counts back after a failed write, so that the next flush carries them. */
  restore(counts: DrainedUsage): void {
    for (const [environmentId, flags] of counts) {
      for (const [slug, n] of flags) {
        let current = this.singles.get(environmentId);
        if (current === undefined) this.singles.set(environmentId, (current = new Map()));
        current.set(slug, (current.get(slug) ?? 0) + n);
      }
    }
  }
}
