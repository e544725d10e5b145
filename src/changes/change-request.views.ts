import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import { FLAG_CONFIG_FIELDS, type FlagConfig, flagConfig, type FlagService } from '../flags/index.ts';
import { redactActor, type Role } from '../identity/index.ts';
import { approvalsNeeded, type Environment, type Project, type ProjectService } from '../projects/index.ts';
import { segmentConfig, type SegmentService } from '../segments/index.ts';
import { type ChangeStatus, differences, revisionsSinceReset } from './change.ts';
import type { ChangeItemKind, ChangeRequestRecord, ChangeStore } from './change.store.ts';

export interface ChangeRequestViewsDeps {
  db: Db;
  store: ChangeStore;
  projects: ProjectService;
  flags: Pick<FlagService, 'findFlag'>;
  segments: Pick<SegmentService, 'findSegment'>;
}

const SEGMENT_FIELDS = ['name', 'description', 'match', 'conditions'] as const;

/**
 * Change requests as members read them: one with its changes (and how each differs from what is there
 * now), approvals, revisions and comments, or a project's list. Who wrote, approved or commented is a
 * member's e-mail address or a token's name; viewers get the labels the audit log gives them instead
 * (identity's viewer redaction, issue 29 item 10).
 */
export class ChangeRequestViews {
  constructor(private readonly deps: ChangeRequestViewsDeps) {}

  /** The request, its project and environment; throws not-found. */
  async find(projectKey: string, id: string): Promise<{ project: Project; environment: Environment; record: ChangeRequestRecord }> {
    const project = await this.deps.projects.getProject(projectKey);
    const record = await this.deps.store.find(this.deps.db, project.id, id);
    if (!record) throw new AppError('not_found', message('changeRequestNotFound', { id, projectKey }));
    return { project, environment: environmentOf(project, record.environmentId), record };
  }

  /** A request with its changes, approvals, revisions and comments, as `role` may see it (owners and editors see everything). */
  async view(projectKey: string, id: string, role: Role = 'owner'): Promise<ChangeRequestView> {
    const { project, record } = await this.find(projectKey, id);
    return this.viewOf(project, record, role);
  }

  /** A project's requests, newest first, of the statuses given (all when empty), as `role` may see them. */
  async list(projectKey: string, statuses: readonly ChangeStatus[], limit: number, role: Role = 'owner'): Promise<ChangeRequestSummary[]> {
    const project = await this.deps.projects.getProject(projectKey);
    const records = await this.deps.store.list(this.deps.db, project.id, statuses, limit);
    return Promise.all(
      records.map(async (r) => {
        const environment = environmentOf(project, r.environmentId);
        const items = await this.deps.store.items(this.deps.db, r.id);
        const approvals = await this.deps.store.approvals(this.deps.db, r.id);
        return { ...summaryOf(r, environment, role), approvals: approvals.length, changes: items.map((i) => ({ kind: i.kind, key: i.key })) };
      }),
    );
  }

  /** `record` of `project` as `role` may see it. */
  async viewOf(project: Project, record: ChangeRequestRecord, role: Role = 'owner'): Promise<ChangeRequestView> {
    const environment = environmentOf(project, record.environmentId);
    const { store, db } = this.deps;
    const [items, approvals, comments, revisions] = await Promise.all([
      store.items(db, record.id),
      store.approvals(db, record.id),
      store.comments(db, record.id),
      store.revisions(db, record.id),
    ]);
    const changes = await Promise.all(
      items.map(async (item) => {
        // An applied request shows what it changed then (issue 31 item 3), an open one what it would change now.
        const applied = record.status === 'applied';
        const differencesOf: DifferencesOf = !applied ? 'now' : item.appliedBefore === undefined ? 'unknown' : 'applied';
        if (item.kind === 'flag') {
          const flag = await this.deps.flags.findFlag(environment.id, item.key);
          const base = applied ? (item.appliedBefore ?? null) : flag ? flagConfig(flag) : null;
          return {
            kind: item.kind,
            key: item.key,
            baseVersion: item.baseVersion,
            currentVersion: flag?.version ?? null,
            config: item.config,
            differencesOf,
            differences: base ? differences(base as unknown as FlagConfig, item.config as unknown as FlagConfig, FLAG_CONFIG_FIELDS) : [],
          };
        }
        if (item.kind === 'release') {
          // A release to start: nothing to compare it with, nothing it is based on (checked again when applied).
          return { kind: item.kind, key: item.key, baseVersion: null, currentVersion: null, config: item.config, differencesOf, differences: [] };
        }
        const segment = await this.deps.segments.findSegment(undefined, project.id, item.key);
        const none = { name: null, description: null, match: null, conditions: null };
        const base = applied ? (item.appliedBefore ?? none) : segment ? segmentConfig(segment) : none;
        return {
          kind: item.kind,
          key: item.key,
          baseVersion: item.baseVersion,
          currentVersion: segment?.version ?? null,
          config: item.config,
          differencesOf,
          differences: differencesOf === 'unknown' ? [] : differences(base as Record<string, unknown>, item.config, SEGMENT_FIELDS),
        };
      }),
    );
    return {
      ...summaryOf(record, environment, role),
      requiredApprovals: approvalsNeeded(environment),
      approvals: approvals.map((a) => ({ userId: a.userId, label: labelOf(role, { type: 'user', id: a.userId, label: a.label }), at: a.createdAt })),
      revisions: revisions.map((r) => ({ revision: r.revision, author: labelOf(role, r.author), approvalsReset: r.approvalsReset })),
      // The members approvalRefusal (change.ts) refuses: the dashboard offers them no Approve (issue 31 item 5).
      cannotApprove: [...new Set([record.author.id, ...revisionsSinceReset(revisions).map((r) => r.author.id)])].filter((id): id is string => id !== null),
      changes: changes.map((c) => ({ ...c, conflict: record.status !== 'applied' && c.currentVersion !== c.baseVersion })),
      comments: comments.map((c) => ({
        id: c.id,
        // A comment without a member is the admin token's.
        author: labelOf(role, { type: c.authorId === null ? 'admin_token' : 'user', id: c.authorId, label: c.authorLabel }),
        body: c.body,
        at: c.createdAt,
      })),
    };
  }
}

/** What `role` sees of an actor's label: a member's e-mail address and a token's name are hidden from viewers. */
const labelOf = (role: Role, actor: ChangeRequestRecord['author']): string => redactActor(role, actor).label;

export function environmentOf(project: Project, environmentId: string): Environment {
  const environment = project.environments.find((e) => e.id === environmentId);
  // Environments are deleted with their change requests (foreign key), so this cannot be missing.
  if (!environment) throw new AppError('not_found', message('adminEnvironmentNotFound', { environmentKey: environmentId, projectKey: project.key }));
  return environment;
}

export function summaryOf(r: ChangeRequestRecord, environment: Environment, role: Role = 'owner') {
  return {
    id: r.id,
    environment: { key: environment.key, name: environment.name },
    title: r.title,
    description: r.description,
    status: r.status,
    author: labelOf(role, r.author),
    revision: r.revision,
    scheduledAt: r.scheduledAt,
    appliedAt: r.appliedAt,
    appliedLate: r.appliedLate,
    failure: r.failure,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

/**
 * What a change's `differences` compare with: the configuration now (a request not applied), the one it
 * replaced when it was applied, or nothing known (applied before migration 0033 kept that).
 */
export type DifferencesOf = 'now' | 'applied' | 'unknown';

export type ChangeRequestSummary = ReturnType<typeof summaryOf> & { approvals: number; changes: Array<{ kind: ChangeItemKind; key: string }> };

export interface ChangeRequestView extends ReturnType<typeof summaryOf> {
  requiredApprovals: number;
  approvals: Array<{ userId: string; label: string; at: string }>;
  /** Who wrote each revision of the changes, oldest first; whether writing it reset the approvals. */
  revisions: Array<{ revision: number; author: string; approvalsReset: boolean }>;
  /** Member ids who may not approve the current revision: its author and who wrote a revision since the approvals were last reset. */
  cannotApprove: string[];
  changes: Array<{
    kind: ChangeItemKind;
    key: string;
    baseVersion: number | null;
    currentVersion: number | null;
    config: Record<string, unknown>;
    differencesOf: DifferencesOf;
    differences: Array<{ field: string; from: unknown; to: unknown }>;
    conflict: boolean;
  }>;
  comments: Array<{ id: string; author: string; body: string; at: string }>;
}
