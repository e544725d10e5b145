import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { FlagChange, FlagChanges } from './flag-changes.ts';
import type { FlagReadModel } from './flag.read-model.ts';

/**
 * The other worker processes of this instance (FLAGPOST_WORKERS > 1), as the cluster's primary relays
 * between them: `broadcast` resolves once every other worker ran its handlers (or after a bounded wait).
 */
export interface PeerChannel {
  broadcast(body: unknown): Promise<void>;
  onPeerMessage(handler: (body: unknown) => void): void;
}

export interface PeerFlagChangesOptions {
  db: Db;
  reads: FlagReadModel;
  peers: PeerChannel;
  /** How this worker's own read model (and, on PostgreSQL, the other instances) learn a change. */
  inner: FlagChanges;
  /** Milliseconds between two re-checks on SQLite (default 5000); undefined: no re-check (PostgreSQL has its own). */
  recheckMs: number | undefined;
}

// The workers of one instance (docs/adr/0029-workers.md). A write applies its change through `inner` (this
// worker's read model, and NOTIFY to the other instances on PostgreSQL), then hands it to every other
// worker through the primary and waits until they applied it before it answers: once a write is
// answered, every worker of the instance reads it, on both engines. On SQLite, which has no
// LISTEN/NOTIFY, a change that never arrived (the writer died between its commit and the message, or a
// worker did not answer within the primary's 1 s) is caught by a periodic re-check, as PostgreSQL's feed
// does: `PRAGMA data_version` tells cheaply whether another connection committed anything, and only then
// a fingerprint of every environment's flags is compared.
export class PeerFlagChanges implements FlagChanges {
  private dataVersion: number | undefined;
  private fingerprints: Map<string, string> | undefined;
  private environmentCount: number | undefined;

  constructor(private readonly options: PeerFlagChangesOptions) {
    options.peers.onPeerMessage((body) => {
      const change = body as FlagChange | undefined;
      if (change?.kind === 'keys') options.reads.apply({ kind: 'keys' });
      else if (change?.kind === 'environment' && typeof change.environmentId === 'string') options.reads.apply(change);
    });
  }

  async start(): Promise<void> {
    await this.options.inner.start();
  }

  async publish(change: FlagChange): Promise<void> {
    await this.options.inner.publish(change);
    await this.options.peers.broadcast(change);
  }

  async stop(): Promise<void> {
    await this.options.inner.stop();
  }

  /** SQLite's re-check, or, on PostgreSQL, the inner feed's. */
  get recheckEveryMs(): number {
    return this.options.recheckMs ?? this.options.inner.recheckEveryMs;
  }

  recheck(): Promise<void> {
    return this.options.recheckMs === undefined ? this.options.inner.recheck() : this.recheckData();
  }

  /** The safety net on SQLite; the first run only records what it saw. */
  private async recheckData(): Promise<void> {
    const { rows: version } = await sql<{ data_version: number }>`pragma data_version`.execute(this.options.db);
    const dataVersion = Number(version[0]?.data_version);
    if (dataVersion === this.dataVersion) return;
    this.dataVersion = dataVersion;
    const { rows } = await sql<{ environment_id: string; slug: string; updated_at: string }>`
      select environment_id, slug, updated_at from flags order by environment_id, slug`.execute(this.options.db);
    const hashes = new Map<string, ReturnType<typeof createHash>>();
    for (const row of rows) {
      let hash = hashes.get(row.environment_id);
      if (!hash) hashes.set(row.environment_id, (hash = createHash('sha256')));
      hash.update(`${row.slug}@${row.updated_at},`);
    }
    const next = new Map([...hashes].map(([id, hash]) => [id, hash.digest('base64')]));
    const counted = await sql<{ n: number }>`select count(*) as n from environments`.execute(this.options.db);
    const environmentCount = Number(counted.rows[0]?.n ?? 0);
    const previous = this.fingerprints;
    if (previous) {
      for (const id of new Set([...previous.keys(), ...next.keys()])) {
        if (previous.get(id) !== next.get(id)) this.options.reads.apply({ kind: 'environment', environmentId: id });
      }
      if (environmentCount !== this.environmentCount) this.options.reads.apply({ kind: 'keys' });
    }
    this.fingerprints = next;
    this.environmentCount = environmentCount;
  }
}
