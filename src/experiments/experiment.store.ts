import { isUniqueViolation } from '../db/codec.ts';
import type { Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { ExperimentsTable } from './experiment.table.ts';
import type { Experiment, ExperimentStatus, MeasuredSplit } from './experiment.ts';

const toExperiment = (r: ExperimentsTable): Experiment => ({
  id: r.id,
  projectId: r.project_id,
  environmentId: r.environment_id,
  key: r.key,
  name: r.name,
  flagKey: r.flag_key,
  ruleId: r.rule_id,
  controlVariant: r.control_variant,
  metrics: JSON.parse(r.metrics) as string[],
  guardrails: JSON.parse(r.guardrails) as string[],
  hypothesis: r.hypothesis,
  status: r.status as ExperimentStatus,
  split: r.split === null ? null : (JSON.parse(r.split) as MeasuredSplit),
  startedAt: r.started_at,
  stoppedAt: r.stopped_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toRow = (x: Experiment): ExperimentsTable => ({
  id: x.id,
  project_id: x.projectId,
  environment_id: x.environmentId,
  key: x.key,
  name: x.name,
  flag_key: x.flagKey,
  rule_id: x.ruleId,
  control_variant: x.controlVariant,
  metrics: JSON.stringify(x.metrics),
  guardrails: JSON.stringify(x.guardrails),
  hypothesis: x.hypothesis,
  status: x.status,
  split: x.split === null ? null : JSON.stringify(x.split),
  started_at: x.startedAt,
  stopped_at: x.stoppedAt,
  created_at: x.createdAt,
  updated_at: x.updatedAt,
});

/** A running experiment as the read path's exposure recording needs it. */
export interface RunningSplit {
  experimentId: string;
  environmentId: string;
  flagKey: string;
  ruleId: string;
}

export class ExperimentStore {
  async insert(db: Executor, experiment: Experiment, environmentKey: string): Promise<void> {
    try {
      await db.insertInto('experiments').values(toRow(experiment)).execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', message('experimentExists', { experimentKey: experiment.key, environmentKey }));
      throw error;
    }
  }

  async update(db: Executor, experiment: Experiment): Promise<void> {
    const { id, project_id: _p, environment_id: _e, key: _k, created_at: _c, ...values } = toRow(experiment);
    await db.updateTable('experiments').set(values).where('id', '=', id).execute();
  }

  async find(db: Executor, environmentId: string, key: string): Promise<Experiment | undefined> {
    const row = await db.selectFrom('experiments').selectAll().where('environment_id', '=', environmentId).where('key', '=', key).executeTakeFirst();
    return row && toExperiment(row);
  }

  async list(db: Executor, environmentId: string): Promise<Experiment[]> {
    return (await db.selectFrom('experiments').selectAll().where('environment_id', '=', environmentId).orderBy('created_at').orderBy('key').execute()).map(
      toExperiment,
    );
  }

  /** The running experiments of a project (a metric's delete looks for its users). */
  async listRunningInProject(db: Executor, projectId: string): Promise<Experiment[]> {
    return (await db.selectFrom('experiments').selectAll().where('project_id', '=', projectId).where('status', '=', 'running').execute()).map(toExperiment);
  }

  /** The running experiment on a flag of an environment, if any. */
  async findRunningOnFlag(db: Executor, environmentId: string, flagKey: string): Promise<Experiment | undefined> {
    const row = await db
      .selectFrom('experiments')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('flag_key', '=', flagKey)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return row && toExperiment(row);
  }

  /** Every running experiment's split (the read path's exposure recording, refreshed periodically). */
  async runningSplits(db: Executor): Promise<RunningSplit[]> {
    const rows = await db.selectFrom('experiments').select(['id', 'environment_id', 'flag_key', 'split']).where('status', '=', 'running').execute();
    return rows.map((r) => ({
      experimentId: r.id,
      environmentId: r.environment_id,
      flagKey: r.flag_key,
      ruleId: (JSON.parse(r.split ?? '{}') as Partial<MeasuredSplit>).ruleId ?? '',
    }));
  }

  async delete(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('experiments').where('id', '=', id).execute();
  }
}
