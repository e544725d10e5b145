import type { Clock } from '../clock.ts';
import type { Db, Dialect } from '../db/database.ts';
import type { OutageLog } from '../db/outage.ts';
import type { DomainEvents } from '../events/index.ts';
import type { ProjectService } from '../projects/index.ts';
import { engineSegment, type SegmentStore } from '../segments/index.ts';
import type { FlagStore } from '../flags/flag.store.ts';
import type { FlagChanges } from './flag-changes.ts';
import { FlagReadModel } from './flag.read-model.ts';
import { LocalFlagChanges } from './local-flag-changes.ts';
import { OfrepStreams, type StreamLimits, StreamTokens } from './ofrep.streams.ts';
import { type PeerChannel, PeerFlagChanges } from './peer-flag-changes.ts';
import { PgFlagChanges } from './pg-flag-changes.ts';

export interface FlagReadPathDeps {
  db: Db;
  dialect: Dialect;
  /** The PostgreSQL connection string, for the LISTEN connection; undefined on SQLite. */
  databaseUrl: string | undefined;
  projects: ProjectService;
  store: FlagStore;
  /** The project's segments, loaded with an environment's flags (issue 18). */
  segments: SegmentStore;
  events: DomainEvents;
  log: OutageLog;
  /** Signs the URLs of the OFREP event streams (issue 10). */
  streamKey: Buffer;
  streamLimits: StreamLimits;
  /** The clock port (the engine's conditions that compare with now). */
  clock: Clock;
  /** The other worker processes when FLAGPOST_WORKERS > 1; on SQLite changes travel to them this way. */
  peers?: PeerChannel;
}

export interface FlagReadPath {
  readonly reads: FlagReadModel;
  /** How changes reach this instance's read model, and the other instances' on PostgreSQL; `start()` starts listening. */
  readonly changes: FlagChanges;
  readonly streams: OfrepStreams;
  readonly streamTokens: StreamTokens;
}

/**
 * The client read path: the read model, fed by the committed domain events of admin writes. Several
 * instances share PostgreSQL, so there changes also travel to the others by LISTEN/NOTIFY; the workers of
 * one instance (FLAGPOST_WORKERS > 1) also tell each other through their primary (peer-flag-changes.ts).
 */
export function openFlagReadPath(deps: FlagReadPathDeps): FlagReadPath {
  const { db, store, segments, projects, events } = deps;
  const streamTokens = new StreamTokens(deps.streamKey);
  const reads = new FlagReadModel(
    {
      async loadEnvironment(projectKey, environmentKey, previous) {
        const env = await projects.findEnvironmentByKeys(projectKey, environmentKey);
        if (!env) return undefined;
        // A change committed between the two reads bumps the read model's generation, so such a load is
        // answered once but never kept. Unchanged rows come back as the last snapshot's Flag objects.
        return {
          environmentId: env.id,
          flags: await store.listEnvironmentFlags(db, env.id, previous?.environmentId === env.id ? previous.flags : undefined),
          segments: (await segments.listProjectSegments(db, env.projectId)).map(engineSegment),
        };
      },
    },
    (projectKey, environmentKey) => streamTokens.uriOf(projectKey, environmentKey),
    deps.clock,
  );
  const streams = new OfrepStreams(reads, deps.streamLimits);
  let changes: FlagChanges;
  const onPostgres = deps.dialect === 'postgres' && deps.databaseUrl !== undefined;
  if (onPostgres) {
    changes = new PgFlagChanges({ db, databaseUrl: deps.databaseUrl!, reads, log: deps.log });
  } else {
    changes = new LocalFlagChanges(reads);
  }
  if (deps.peers) {
    changes = new PeerFlagChanges({ db, reads, peers: deps.peers, inner: changes, recheckMs: onPostgres ? undefined : 5000 });
  }
  // New keys: remembered unknown key pairs may now be known.
  events.onCommit('project.created', () => changes.publish({ kind: 'keys' }));
  events.onCommit('environment.created', () => changes.publish({ kind: 'keys' }));
  const environmentsChanged = async (event: { environmentIds: string[] }) => {
    for (const environmentId of event.environmentIds) await changes.publish({ kind: 'environment', environmentId });
  };
  events.onCommit('flag.changed', environmentsChanged);
  events.onCommit('flag.deleted', environmentsChanged);
  events.onCommit('flag.renamed', environmentsChanged);
  // A deleted environment's (or project's) snapshots are dropped; their keys are then unknown.
  events.onCommit('environment.deleted', (event) => changes.publish({ kind: 'environment', environmentId: event.environmentId }));
  events.onCommit('project.deleted', environmentsChanged);
  // A segment is part of the targeting of every environment of its project.
  events.onCommit('segment.changed', environmentsChanged);
  return { reads, changes, streams, streamTokens };
}
