/**
 * What changed, as far as flag reads are concerned. `environment`: the flags of one environment;
 * `keys`: which project and environment keys exist (drops remembered unknown keys).
 */
export type FlagChange = { kind: 'environment'; environmentId: string } | { kind: 'keys' };

/**
 * Port through which every admin write announces what it changed, after its commit and before its
 * answer. The in-process implementation updates this instance's read model; a multi-instance one also
 * tells the other instances.
 */
export interface FlagChanges {
  publish(change: FlagChange): Promise<void>;
}
