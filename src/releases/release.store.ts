import { isUniqueViolation } from '../db/codec.ts';
import type { Dialect, Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { Actor } from '../audit/index.ts';
import { claimDueRows, type DeliveryOutcome, newQueueRow, pendingStatsOf, recordMailOutcome } from '../delivery/index.ts';
import type { GuardrailView } from './guardrail-readers.ts';
import type { Guardrail, ReleaseStatus, ReleaseStep, StepProgress } from './release.ts';
import type { ReleasesTable, ReleaseTemplatesTable } from './release.table.ts';

/** A release as stored. */
export interface Release {
  id: string;
  projectId: string;
  environmentId: string;
  flagSlug: string;
  status: ReleaseStatus;
  variant: string;
  baseline: string;
  steps: ReleaseStep[];
  progress: StepProgress[];
  currentStep: number;
  guardrails: Guardrail[];
  readings: GuardrailView[];
  templateKey: string | null;
  rolledBackReason: string | null;
  createdBy: Actor;
  createdAt: string;
  updatedAt: string;
  version: number;
}

export interface ReleaseTemplate {
  id: string;
  projectId: string;
  key: string;
  name: string;
  steps: ReleaseStep[];
  guardrails: Guardrail[];
  createdAt: string;
  updatedAt: string;
}

export interface ReleaseNotification {
  id: string;
  recipient: string;
  subject: string;
  body: string;
  attempts: number;
}

const toRelease = (r: ReleasesTable): Release => ({
  id: r.id,
  projectId: r.project_id,
  environmentId: r.environment_id,
  flagSlug: r.flag_slug,
  status: r.status as ReleaseStatus,
  variant: r.variant,
  baseline: r.baseline,
  steps: JSON.parse(r.steps) as ReleaseStep[],
  progress: JSON.parse(r.progress) as StepProgress[],
  currentStep: Number(r.current_step),
  guardrails: JSON.parse(r.guardrails) as Guardrail[],
  readings: JSON.parse(r.readings) as GuardrailView[],
  templateKey: r.template_key,
  rolledBackReason: r.rolled_back_reason,
  createdBy: JSON.parse(r.created_by) as Actor,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  version: Number(r.version),
});

const toRow = (x: Release): ReleasesTable => ({
  id: x.id,
  project_id: x.projectId,
  environment_id: x.environmentId,
  flag_slug: x.flagSlug,
  status: x.status,
  variant: x.variant,
  baseline: x.baseline,
  steps: JSON.stringify(x.steps),
  progress: JSON.stringify(x.progress),
  current_step: x.currentStep,
  guardrails: JSON.stringify(x.guardrails),
  readings: JSON.stringify(x.readings),
  template_key: x.templateKey,
  rolled_back_reason: x.rolledBackReason,
  created_by: JSON.stringify(x.createdBy),
  created_at: x.createdAt,
  updated_at: x.updatedAt,
  version: x.version,
});

const toTemplate = (r: ReleaseTemplatesTable): ReleaseTemplate => ({
  id: r.id,
  projectId: r.project_id,
  key: r.key,
  name: r.name,
  steps: JSON.parse(r.steps) as ReleaseStep[],
  guardrails: JSON.parse(r.guardrails) as Guardrail[],
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const ACTIVE: ReleaseStatus[] = ['running', 'waiting_approval', 'paused'];

export class ReleaseStore {
  constructor(private readonly dialect: Dialect) {}

  /** Inserts a new release; a second active release of the flag and environment is a 409 (the partial unique index). */
  async insert(db: Executor, release: Release, environmentName: string): Promise<void> {
    try {
      await db.insertInto('releases').values(toRow(release)).execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', message('releaseActive', { slug: release.flagSlug, environment: environmentName }));
      throw error;
    }
  }

  async find(db: Executor, environmentId: string, id: string): Promise<Release | undefined> {
    const row = await db.selectFrom('releases').selectAll().where('id', '=', id).where('environment_id', '=', environmentId).executeTakeFirst();
    return row && toRelease(row);
  }

  async findById(db: Executor, id: string): Promise<Release | undefined> {
    const row = await db.selectFrom('releases').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRelease(row);
  }

  /** The active release of a flag in an environment, if any. */
  async findActive(db: Executor, environmentId: string, slug: string): Promise<Release | undefined> {
    const row = await db
      .selectFrom('releases')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('flag_slug', '=', slug)
      .where('status', 'in', ACTIVE)
      .executeTakeFirst();
    return row && toRelease(row);
  }

  /** A flag's releases in an environment, newest first. */
  async listForFlag(db: Executor, environmentId: string, slug: string): Promise<Release[]> {
    const rows = await db
      .selectFrom('releases')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('flag_slug', '=', slug)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map(toRelease);
  }

  /** Where every active release is (its id, environment and flag): the flags whose OFREP evaluations record exposures. */
  async listActiveRules(db: Executor): Promise<Array<{ id: string; environmentId: string; flagSlug: string }>> {
    const rows = await db.selectFrom('releases').select(['id', 'environment_id', 'flag_slug']).where('status', 'in', ACTIVE).execute();
    return rows.map((r) => ({ id: r.id, environmentId: r.environment_id, flagSlug: r.flag_slug }));
  }

  /** Every running release of the instance (the guard's round). */
  async listRunning(db: Executor): Promise<Release[]> {
    const rows = await db.selectFrom('releases').selectAll().where('status', '=', 'running').orderBy('created_at').execute();
    return rows.map(toRelease);
  }

  /**
   * Writes `next` if the row still has `expectedVersion` (and bumps it): true when this write won. Of two
   * instances deciding the same move, one changes the row and the other nothing.
   */
  async update(db: Executor, next: Release, expectedVersion: number): Promise<boolean> {
    const { id: _id, ...row } = toRow({ ...next, version: expectedVersion + 1 });
    const result = await db.updateTable('releases').set(row).where('id', '=', next.id).where('version', '=', expectedVersion).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertReadings(db: Executor, releaseId: string, at: string, readings: readonly GuardrailView[]): Promise<void> {
    if (readings.length === 0) return;
    await db
      .insertInto('release_readings')
      .values(readings.map((r, i) => ({ release_id: releaseId, guardrail: i, at, state: r.state, reading: JSON.stringify(r) })))
      .execute();
  }

  /** A release's readings over time, oldest first (the chart of the two arms). */
  async listReadings(db: Executor, releaseId: string): Promise<Array<{ guardrail: number; at: string; reading: GuardrailView }>> {
    const rows = await db.selectFrom('release_readings').selectAll().where('release_id', '=', releaseId).orderBy('at').orderBy('guardrail').execute();
    return rows.map((r) => ({ guardrail: Number(r.guardrail), at: r.at, reading: JSON.parse(r.reading) as GuardrailView }));
  }

  async insertTemplate(db: Executor, template: ReleaseTemplate, projectKey: string): Promise<void> {
    try {
      await db
        .insertInto('release_templates')
        .values({
          id: template.id,
          project_id: template.projectId,
          key: template.key,
          name: template.name,
          steps: JSON.stringify(template.steps),
          guardrails: JSON.stringify(template.guardrails),
          created_at: template.createdAt,
          updated_at: template.updatedAt,
        })
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', message('releaseTemplateExists', { templateKey: template.key, projectKey }));
      throw error;
    }
  }

  async updateTemplate(db: Executor, template: ReleaseTemplate): Promise<void> {
    await db
      .updateTable('release_templates')
      .set({ name: template.name, steps: JSON.stringify(template.steps), guardrails: JSON.stringify(template.guardrails), updated_at: template.updatedAt })
      .where('id', '=', template.id)
      .execute();
  }

  async findTemplate(db: Executor, projectId: string, key: string): Promise<ReleaseTemplate | undefined> {
    const row = await db.selectFrom('release_templates').selectAll().where('project_id', '=', projectId).where('key', '=', key).executeTakeFirst();
    return row && toTemplate(row);
  }

  async listTemplates(db: Executor, projectId: string): Promise<ReleaseTemplate[]> {
    const rows = await db.selectFrom('release_templates').selectAll().where('project_id', '=', projectId).orderBy('key').execute();
    return rows.map(toTemplate);
  }

  async deleteTemplate(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('release_templates').where('id', '=', id).execute();
  }

  async queueNotification(db: Executor, mail: { id: string; releaseId: string; recipient: string; subject: string; body: string }, now: string): Promise<void> {
    await db
      .insertInto('release_notifications')
      .values({
        id: mail.id,
        release_id: mail.releaseId,
        recipient: mail.recipient,
        subject: mail.subject,
        body: mail.body,
        ...newQueueRow(now),
        sent_at: null,
      })
      .execute();
  }

  /** Claims up to `limit` due e-mails, each with its attempt counted and leased until `leaseUntil` (`claimDueRows`). */
  async claimDueNotifications(db: Executor, now: string, leaseUntil: string, limit: number): Promise<ReleaseNotification[]> {
    const rows = await claimDueRows(db, this.dialect, 'release_notifications', { now, leaseUntil, limit });
    return rows.map((r) => ({ id: r.id, recipient: r.recipient, subject: r.subject, body: r.body, attempts: Number(r.attempts) }));
  }

  async recordNotificationOutcome(db: Executor, id: string, outcome: DeliveryOutcome): Promise<void> {
    await recordMailOutcome(db, 'release_notifications', id, outcome);
  }

  pendingNotificationStats(db: Executor): Promise<{ pending: number; oldestCreatedAt: string | null }> {
    return pendingStatsOf(db, 'release_notifications');
  }
}
