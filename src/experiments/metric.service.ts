import { type Actor, type AuditLog, changesOf, unchanged } from '../audit/index.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { ProjectService } from '../projects/index.ts';
import type { ExperimentStore } from './experiment.store.ts';
import type { MetricStore } from './metric.store.ts';
import { DEFAULT_WINDOW_HOURS, type Metric, metricProblem, type MetricValues } from './metric.ts';

export interface MetricServiceDeps {
  db: Db;
  store: MetricStore;
  experiments: ExperimentStore;
  projects: Pick<ProjectService, 'getProject'>;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
}

const AUDITED = ['key', 'name', 'event', 'type', 'denominatorEvent', 'direction', 'windowHours'] as const;

/** Metrics of a project (issue 32): what experiments measure. */
export class MetricService {
  constructor(private readonly deps: MetricServiceDeps) {}

  /** Creates a metric; 409 when the project has one with the key. */
  async create(
    projectKey: string,
    input: MetricValues & { key: string; name: string; event: string; type: Metric['type']; direction: Metric['direction'] },
    actor: Actor,
  ): Promise<Metric> {
    const project = await this.deps.projects.getProject(projectKey);
    const now = nowIso(this.deps.clock);
    const metric: Metric = {
      id: newId(),
      projectId: project.id,
      key: input.key,
      name: input.name,
      event: input.event,
      type: input.type,
      denominatorEvent: input.denominatorEvent ?? null,
      direction: input.direction,
      windowHours: input.windowHours ?? DEFAULT_WINDOW_HOURS,
      createdAt: now,
      updatedAt: now,
    };
    checkMetric(metric);
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.insert(trx, metric, projectKey);
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'metric',
        entityId: metric.id,
        action: 'metric.created',
        changes: changesOf(null, metric, AUDITED),
      });
    });
    return metric;
  }

  async list(projectKey: string): Promise<Metric[]> {
    const project = await this.deps.projects.getProject(projectKey);
    return this.deps.store.list(this.deps.db, project.id);
  }

  /** A metric, or 404. */
  async get(projectKey: string, metricKey: string): Promise<Metric> {
    const project = await this.deps.projects.getProject(projectKey);
    const metric = await this.deps.store.find(this.deps.db, project.id, metricKey);
    if (!metric) throw new AppError('not_found', message('metricNotFound', { metricKey, projectKey }));
    return metric;
  }

  /** Changes a metric (absent keeps); running experiments' results follow it. */
  async update(projectKey: string, metricKey: string, values: MetricValues, actor: Actor): Promise<Metric> {
    const project = await this.deps.projects.getProject(projectKey);
    return this.deps.db.transaction().execute(async (trx) => {
      const metric = await this.deps.store.find(trx, project.id, metricKey);
      if (!metric) throw new AppError('not_found', message('metricNotFound', { metricKey, projectKey }));
      const next: Metric = {
        ...metric,
        ...Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)),
        denominatorEvent: values.denominatorEvent === undefined ? metric.denominatorEvent : values.denominatorEvent,
        updatedAt: nowIso(this.deps.clock),
      };
      checkMetric(next);
      await this.deps.store.update(trx, next);
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'metric',
        entityId: metric.id,
        action: 'metric.updated',
        changes: { name: unchanged(metric.name), ...changesOf(metric, next, AUDITED) },
      });
      return next;
    });
  }

  /** Deletes a metric; 409 while a running experiment measures it. */
  async delete(projectKey: string, metricKey: string, actor: Actor): Promise<void> {
    const project = await this.deps.projects.getProject(projectKey);
    await this.deps.db.transaction().execute(async (trx) => {
      const metric = await this.deps.store.find(trx, project.id, metricKey);
      if (!metric) throw new AppError('not_found', message('metricNotFound', { metricKey, projectKey }));
      const users = (await this.deps.experiments.listRunningInProject(trx, project.id)).filter(
        (x) => x.metrics.includes(metricKey) || x.guardrails.includes(metricKey),
      );
      if (users.length > 0) {
        throw new AppError('conflict', message('metricInUse', { metricKey, experiments: users.map((x) => x.key).join(', ') }));
      }
      await this.deps.store.delete(trx, metric.id);
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'metric',
        entityId: metric.id,
        action: 'metric.deleted',
        changes: changesOf(metric, null, AUDITED),
      });
    });
  }
}

function checkMetric(metric: Metric): void {
  const problem = metricProblem(metric);
  if (problem) throw AppError.validation([problem]);
}
