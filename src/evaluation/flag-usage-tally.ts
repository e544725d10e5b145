import type { Reason } from '../targeting/index.ts';

// Flag usage counting on the hot read path (issue 23, docs/adr/0035-usage-counting.md). Every answered
// read adds to these in-memory counters, never to the database: a single read is two Map lookups and an
// addition, a list read (OFREP bulk, GET /v1/flags, a flagd sync delivery) one lookup keyed by the array
// of flags it answered. The usage service (usage/flag-usage.service.ts) drains them into hourly rows in batches.
//
// The same calls count evaluations by surface and reason for the metrics (docs/adr/0036): plain numbers
// in one preallocated array, a slot per surface and reason, read at scrape time. A single read adds one
// to a slot whose reason its answer carries; a list or bulk read adds the reason counts of its flags,
// made once per snapshot for the answers that are the same for every context (flag.snapshot.ts).

/** Where a read was answered, for the counters by surface (metrics). */
export type ReadSurface = 'ofrep_single' | 'ofrep_bulk' | 'v1_single' | 'v1_list' | 'flagd_sync';

export const READ_SURFACES: readonly ReadSurface[] = ['ofrep_single', 'ofrep_bulk', 'v1_single', 'v1_list', 'flagd_sync'];

/**
 * The reasons an evaluation is counted with: the OpenFeature reasons Flagpost answers (targeting.ts),
 * and UNKNOWN for a flagd sync delivery, whose flags flagd evaluates out of Flagpost's sight.
 */
export type CountedReason = Reason | 'UNKNOWN';

export const COUNTED_REASONS: readonly CountedReason[] = ['STATIC', 'TARGETING_MATCH', 'SPLIT', 'DEFAULT', 'DISABLED', 'ERROR', 'UNKNOWN'];

/** A reason's slot: its index in COUNTED_REASONS. */
export const REASON_SLOT: Readonly<Record<CountedReason, number>> = Object.freeze(
  Object.fromEntries(COUNTED_REASONS.map((reason, i) => [reason, i])) as Record<CountedReason, number>,
);

/** Evaluations by reason slot (COUNTED_REASONS.length numbers): what one list or bulk read counts as. */
export type ReasonCounts = readonly number[];

/** The reason counts of a list of reasons (one per flag). */
export function reasonCounts(reasons: Iterable<CountedReason>): number[] {
  const counts = new Array<number>(COUNTED_REASONS.length).fill(0);
  for (const reason of reasons) counts[REASON_SLOT[reason]]!++;
  return counts;
}

/**
 * The reasons each surface can answer, published even while zero so that rates start from the first
 * scrape: OFREP's from the engine; `/v1`, which never evaluates, STATIC (the default serve) or DISABLED
 * (a flag switched off in flagd's sense); a flagd sync delivery UNKNOWN.
 */
const OFREP_REASONS: readonly CountedReason[] = ['STATIC', 'TARGETING_MATCH', 'SPLIT', 'DEFAULT', 'DISABLED', 'ERROR'];
const V1_REASONS: readonly CountedReason[] = ['STATIC', 'DISABLED'];
const REASONS_OF: Readonly<Record<ReadSurface, readonly CountedReason[]>> = {
  ofrep_single: OFREP_REASONS,
  ofrep_bulk: OFREP_REASONS,
  v1_single: V1_REASONS,
  v1_list: V1_REASONS,
  flagd_sync: ['UNKNOWN'],
};

/** Where a surface's slots start in the counters. */
const SURFACE_BASE: Readonly<Record<ReadSurface, number>> = Object.freeze(
  Object.fromEntries(READ_SURFACES.map((surface, i) => [surface, i * COUNTED_REASONS.length])) as Record<ReadSurface, number>,
);

/** Evaluations of one surface with one reason since start (metrics). */
export interface EvaluationCount {
  readonly surface: ReadSurface;
  readonly reason: CountedReason;
  readonly count: number;
}

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
  /** Evaluations since start by surface and reason (SURFACE_BASE + reason slot), never drained: the metrics read them. */
  private readonly evaluations = new Float64Array(READ_SURFACES.length * COUNTED_REASONS.length);

  /** One evaluation of one flag, answered with the reason in slot `reason` (REASON_SLOT). */
  one(surface: ReadSurface, environmentId: string, slug: string, reason: number): void {
    this.evaluations[SURFACE_BASE[surface] + reason]!++;
    let flags = this.singles.get(environmentId);
    if (flags === undefined) this.singles.set(environmentId, (flags = new Map()));
    flags.set(slug, (flags.get(slug) ?? 0) + 1);
  }

  /** One read of every flag in `flags` (a list or bulk answer): one evaluation of each, `reasons` their reason counts. */
  all(surface: ReadSurface, environmentId: string, flags: readonly { readonly slug: string }[], reasons: ReasonCounts): void {
    const base = SURFACE_BASE[surface];
    for (let i = 0; i < reasons.length; i++) this.evaluations[base + i]! += reasons[i]!;
    const known = this.lists.get(flags);
    if (known !== undefined) known.count++;
    else this.lists.set(flags, { environmentId, slugs: flags, count: 1 });
  }

  /**
   * An OFREP single evaluation of a key the environment does not have: FLAG_NOT_FOUND, reason ERROR, as
   * OpenFeature providers report it. No flag to count usage for: only the metrics see it.
   */
  notFound(): void {
    this.evaluations[SURFACE_BASE.ofrep_single + REASON_SLOT.ERROR]!++;
  }

  /** Evaluations by surface and reason since start: each reason a surface can answer (zero included), and any other one counted. */
  evaluationCounts(): EvaluationCount[] {
    const counts: EvaluationCount[] = [];
    for (const surface of READ_SURFACES) {
      const base = SURFACE_BASE[surface];
      COUNTED_REASONS.forEach((reason, slot) => {
        const count = this.evaluations[base + slot]!;
        if (count > 0 || REASONS_OF[surface].includes(reason)) counts.push({ surface, reason, count });
      });
    }
    return counts;
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
