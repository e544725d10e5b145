import { isUniqueViolation } from '../db/codec.ts';
import type { Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { MetricsTable } from './metric.table.ts';
import type { Metric, MetricDirection, MetricType } from './metric.ts';

const toMetric = (r: MetricsTable): Metric => ({
  id: r.id,
  projectId: r.project_id,
  key: r.key,
  name: r.name,
  event: r.event,
  type: r.type as MetricType,
  denominatorEvent: r.denominator_event,
  direction: r.direction as MetricDirection,
  windowHours: Number(r.window_hours),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toRow = (m: Metric): MetricsTable => ({
  id: m.id,
  project_id: m.projectId,
  key: m.key,
  name: m.name,
  event: m.event,
  type: m.type,
  denominator_event: m.denominatorEvent,
  direction: m.direction,
  window_hours: m.windowHours,
  created_at: m.createdAt,
  updated_at: m.updatedAt,
});

export class MetricStore {
  async insert(db: Executor, metric: Metric, projectKey: string): Promise<void> {
    try {
      await db.insertInto('metrics').values(toRow(metric)).execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', message('metricExists', { metricKey: metric.key, projectKey }));
      throw error;
    }
  }

  async update(db: Executor, metric: Metric): Promise<void> {
    const { id, project_id: _p, key: _k, created_at: _c, ...values } = toRow(metric);
    await db.updateTable('metrics').set(values).where('id', '=', id).execute();
  }

  async find(db: Executor, projectId: string, key: string): Promise<Metric | undefined> {
    const row = await db.selectFrom('metrics').selectAll().where('project_id', '=', projectId).where('key', '=', key).executeTakeFirst();
    return row && toMetric(row);
  }

  async list(db: Executor, projectId: string): Promise<Metric[]> {
    return (await db.selectFrom('metrics').selectAll().where('project_id', '=', projectId).orderBy('key').execute()).map(toMetric);
  }

  async delete(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('metrics').where('id', '=', id).execute();
  }
}
