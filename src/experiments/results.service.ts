import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { ProjectService } from '../projects/index.ts';
import type { ExperimentStore } from './experiment.store.ts';
import type { MetricStore } from './metric.store.ts';
import { type ExperimentResults, metricResult, usersAndSrm } from './results.ts';
import type { ResultsStore } from './results.store.ts';

export interface ResultsServiceDeps {
  db: Db;
  store: ResultsStore;
  experiments: ExperimentStore;
  metrics: MetricStore;
  projects: Pick<ProjectService, 'getEnvironment'>;
}

/** Results of experiments, computed from the stored events at every read (issue 32, ADR 0044). */
export class ResultsService {
  constructor(private readonly deps: ResultsServiceDeps) {}

  /**
   * The results of a started experiment: users per variant, the sample-ratio check, and per metric (goals,
   * then guardrails) each variant's summary and its comparison with the control. 409 for a draft.
   */
  async results(projectKey: string, environmentKey: string, experimentKey: string): Promise<ExperimentResults> {
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    const experiment = await this.deps.experiments.find(this.deps.db, environment.id, experimentKey);
    if (!experiment) throw new AppError('not_found', message('experimentNotFound', { experimentKey, environmentKey }));
    if (experiment.status === 'draft' || experiment.startedAt === null) throw new AppError('conflict', message('experimentNotStarted', { experimentKey }));
    const metrics = new Map((await this.deps.metrics.list(this.deps.db, project.id)).map((m) => [m.key, m]));
    const { byVariant, multiple } = await this.deps.store.users(this.deps.db, experiment.id);
    const { users, srm } = usersAndSrm(experiment, byVariant);
    const endMs = experiment.stoppedAt === null ? null : Date.parse(experiment.stoppedAt);
    const measured = [...experiment.metrics.map((key) => ({ key, guardrail: false })), ...experiment.guardrails.map((key) => ({ key, guardrail: true }))];
    const results: ExperimentResults = {
      experiment: experiment.key,
      status: experiment.status,
      startedAt: experiment.startedAt,
      multipleExposures: multiple,
      users,
      srm,
      metrics: [],
    };
    // A metric deleted since the experiment stopped has no definition left to compute.
    const known = measured.flatMap(({ key, guardrail }) => {
      const metric = metrics.get(key);
      return metric ? [{ metric, guardrail }] : [];
    });
    const sums = await this.deps.store.sums(this.deps.db, {
      experimentId: experiment.id,
      environmentId: environment.id,
      metrics: known.map(({ metric }) => ({
        event: metric.event,
        denominatorEvent: metric.type === 'ratio' ? metric.denominatorEvent : null,
        windowMs: metric.windowHours * 3_600_000,
      })),
      endMs,
    });
    results.metrics = known.map(({ metric, guardrail }, i) => metricResult(experiment, metric, guardrail, sums[i]!));
    return results;
  }
}
