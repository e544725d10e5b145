import {
  EventService,
  EventStore,
  EventWriter,
  ExperimentService,
  ExperimentStore,
  ExposureRecorder,
  MetricService,
  MetricStore,
  ResultsService,
  ResultsStore,
} from '../experiments/index.ts';
import type { FlagReadModel } from '../evaluation/index.ts';
import type { FlagService } from '../flags/index.ts';
import type { Composition } from './context.ts';

/** Experiments (issue 32): tracked events, metrics, experiments, their results and the server-side exposures. */
export function composeExperiments(c: Composition, { reads, flags }: { reads: FlagReadModel; flags: FlagService }) {
  const { config, db, handle, audit, clock, log, projects } = c;
  const eventStore = new EventStore(handle.dialect);
  const eventWriter = new EventWriter(db, eventStore, { writeFlushedOffLoop: handle.writeFlushedOffLoop });
  // The read model answers the track route's port (ClientEnvironments): its warm snapshots know every flag's variants.
  const trackedEvents = new EventService({
    db,
    store: eventStore,
    writer: eventWriter,
    environments: reads,
    clock,
    retentionDays: config.events.retentionDays,
  });
  const experimentStore = new ExperimentStore();
  const metricStore = new MetricStore();
  const experimentMetrics = new MetricService({ db, store: metricStore, experiments: experimentStore, projects, audit, clock });
  const experiments = new ExperimentService({
    db,
    store: experimentStore,
    metrics: metricStore,
    events: eventStore,
    projects,
    flags,
    audit,
    clock,
  });
  // Server-side exposures: the read path calls its port (ExposurePort), experiments/ answers it.
  const exposures = new ExposureRecorder({ db, experiments: experimentStore, writer: eventWriter, clock, log });
  experiments.listen(exposures);
  reads.exposures = exposures;
  const experimentResults = new ResultsService({
    db,
    store: new ResultsStore(handle.dialect),
    experiments: experimentStore,
    metrics: metricStore,
    projects,
  });
  return { metricStore, trackedEvents, experimentMetrics, experiments, exposures, experimentResults };
}
