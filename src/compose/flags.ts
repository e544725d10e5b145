import { instanceSecret } from '../admin/index.ts';
import { openFlagReadPath } from '../evaluation/index.ts';
import { FlagdService } from '../documents/index.ts';
import { FlagdSyncServer, FlagdSyncService, FlagdSyncStore } from '../flagd-sync/index.ts';
import { FlagService, FlagStore, FlagWrites, PlaygroundService } from '../flags/index.ts';
import { ReleaseRuleGuard } from '../releases/index.ts';
import { SegmentService, SegmentStore } from '../segments/index.ts';
import { FlagUsage, FlagUsageStore } from '../usage/index.ts';
import type { Composition } from './context.ts';

/**
 * Flags and their reads: segments, the write model with its one write door, the read path (read model,
 * change feed, OFREP streams), usage counting, the flagd import and export, the playground and flagd's
 * sync service.
 */
export async function composeFlags(c: Composition) {
  const { config, db, handle, events, audit, clock, log, projects } = c;
  const flagStore = new FlagStore();
  const segmentStore = new SegmentStore();
  const segments = new SegmentService({ db, store: segmentStore, projects, events, audit, clock });
  const streamKey = await instanceSecret(db, c.settings, 'ofrep_stream_key');
  const { reads, changes, streams, streamTokens } = openFlagReadPath({
    db,
    dialect: handle.dialect,
    databaseUrl: handle.databaseUrl,
    projects,
    store: flagStore,
    segments: segmentStore,
    events,
    log,
    streamKey,
    clock,
    streamLimits: config.streams,
    peers: c.ports.worker,
  });
  const usage = new FlagUsage({
    db,
    store: new FlagUsageStore(),
    projects,
    flags: flagStore,
    tally: reads.usage,
    events,
    clock,
    retentionDays: config.usage.retentionDays,
    log,
  });
  // The one write door of a flag: the admin API, change requests, the flagd import and flags as code all go through it.
  const flagWrites = new FlagWrites({ store: flagStore, segments, audit });
  // An active release's rule is moved only by its release (issue 33).
  flagWrites.guard(new ReleaseRuleGuard());
  const flags = new FlagService({ db, store: flagStore, projects, segments, events, audit, clock, usage, writes: flagWrites });
  const flagd = new FlagdService({ db, store: flagStore, projects, segments, events, audit, clock, writes: flagWrites });
  const playground = new PlaygroundService({ db, store: flagStore, projects, segments, clock });
  const flagdSync = new FlagdSyncService({ db, store: new FlagdSyncStore(), projects, flagd, audit, clock });
  // Hears the same changes as the read model: this instance's writes and, on PostgreSQL, the others'.
  const flagdSyncServer = new FlagdSyncServer({
    service: flagdSync,
    watch: (watcher) => reads.watch(watcher),
    log,
    perClient: config.streams.perClient,
    usage: reads.usage,
    connections: {
      max: config.flagdSync.maxConnections,
      perClient: config.flagdSync.maxConnectionsPerClient,
      idleMs: config.flagdSync.idleMs,
      maxAgeMs: config.flagdSync.maxAgeMs,
    },
  });
  return {
    flagStore,
    segments,
    reads,
    changes,
    streams,
    streamTokens,
    usage,
    flagWrites,
    flags,
    flagd,
    playground,
    flagdSync,
    flagdSyncServer,
  };
}
