import type { FlagChange, FlagChanges } from './flag-changes.ts';
import type { FlagReadModel } from './flag.read-model.ts';

/** Applies changes to this instance's read model only: one instance, or SQLite. */
export class LocalFlagChanges implements FlagChanges {
  constructor(private readonly reads: FlagReadModel) {}

  async publish(change: FlagChange): Promise<void> {
    this.reads.apply(change);
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  readonly recheckEveryMs = 0;

  async recheck(): Promise<void> {}
}
