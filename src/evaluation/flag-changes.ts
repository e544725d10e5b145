/**
 * What changed, as far as flag reads are concerned. `environment`: the flags of one environment;
 * `keys`: which project and environment keys exist (drops remembered unknown keys).
 */
export type FlagChange = { kind: 'environment'; environmentId: string } | { kind: 'keys' };

/**
 * Port through which the read path learns what an admin write changed, after its commit and before its
 * answer (flag-read-path.ts turns domain events into these changes). The in-process implementation updates this instance's read model; a multi-instance one also
 * tells the other instances.
 */
export interface FlagChanges {
  publish(change: FlagChange): Promise<void>;
  /** Starts listening to other instances and workers (services.start()); resolves once the first connection was tried. */
  start(): Promise<void>;
  /** Stops listening to other instances; the read model stays as it is. */
  stop(): Promise<void>;
  /**
   * Milliseconds between two runs of the feed's safety net, `recheck()`, which the scheduler runs in every
   * process once the feed started (src/compose/jobs.ts); 0: the feed needs none (one process).
   */
  readonly recheckEveryMs: number;
  /** Finds and applies the changes the feed missed (the first run only records what it saw). */
  recheck(): Promise<void>;
}
