import type { Actor, AuditLog } from '../audit/index.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import { AppError, type FieldProblem, message } from '../errors.ts';
import type { DomainEvents, Emit } from '../events/index.ts';
import { bypassNote, checkSegmentsWritable, checkWritable, type Environment, type Project, type ProjectService } from '../projects/index.ts';
import { engineSegment, type SegmentService, type SegmentValues } from '../segments/index.ts';
import { environmentProblem, type Segment, type TargetedFlag } from '../targeting/index.ts';
import {
  checkPreviewContent,
  enabledOf,
  type Flag,
  type FlagConfig,
  flagConfig,
  type FlagStore,
  type FlagWrites,
  RESERVED_SLUGS,
  safeTargeting,
} from '../flags/index.ts';
import {
  canonical,
  changedFields,
  type CurrentState,
  type DocumentFlagEnvironment,
  type DocumentFormEntry,
  documentFlagEnvironment,
  documentProblems,
  type FlagSettings,
  flagSettings,
  planDocument,
  type PlanStep,
  type ProjectDocument,
  projectDocument,
  segmentOf,
  settingsOf,
} from './project-document.ts';

export interface ProjectDocumentServiceDeps {
  db: Db;
  store: FlagStore;
  /** The one write door of a flag (protection, guards, store, audit, announcement); the document is validated whole before. */
  writes: FlagWrites;
  projects: ProjectService;
  segments: SegmentService;
  /** Announces flag.changed and flag.deleted (project, environment and segment events come from their services). */
  events: DomainEvents;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
  /** Opens the change requests of protected environments (answered by changes/, which depends on flags/). */
  protectedChanges: ProtectedEnvironmentChanges;
  /** The forms of a project, as documents carry them (answered by forms/, issue 34). */
  forms: ProjectForms;
}

/**
 * Forms as code (issue 34): a port owned by documents/ and answered by forms/ (FormService), which
 * compose.ts passes in. Both run in the caller's transaction.
 */
export interface ProjectForms {
  /** The project's forms by key, as a document writes them (secrets as references). */
  documentForms(db: Executor, projectId: string): Promise<Record<string, DocumentFormEntry>>;
  /** Makes the project's forms match the document's (created or updated, never deleted); `project` undefined: a project a dry run would create. */
  applyDocumentForms(
    trx: Executor,
    project: { id: string; key: string } | undefined,
    forms: Readonly<Record<string, DocumentFormEntry>>,
    actor: Actor,
    dryRun: boolean,
  ): Promise<Array<{ action: 'create' | 'update'; key: string; fields?: string[] }>>;
}

/**
 * Change requests as flags as code opens them for protected environments (issue 24): a port owned by
 * flags/ and answered by changes/ (PromotionService, with the change-request service), which compose.ts
 * passes in, so that flags/ does not import changes/. The requests it opens are marked as flags as
 * code's (a stored origin), so that the next apply finds the open one of an environment again.
 */
export interface ProtectedEnvironmentChanges {
  /** Who reviews a request by `actor` in `project`; read before the apply's transaction (on SQLite a read outside it would wait for it). */
  reviewersOf(project: Project, actor: Actor): Promise<string[]>;
  /** The open change requests applies opened in the project (the newest of each environment), read within the caller's transaction. */
  openRequests(trx: Executor, project: Project): Promise<Array<{ environmentId: string; id: string; title: string }>>;
  /**
   * The environment's change request of whole configurations, within the caller's transaction: the open
   * one an earlier apply opened, kept when it already proposes exactly these (`unchanged`) or else edited
   * to them, approvals reset (`updated`); without one, a new one submitted for review (`opened`). A dry
   * run writes nothing and answers what would happen (the id of the request it would keep or update).
   */
  propose(
    trx: Executor,
    emit: Emit,
    target: { project: Project; environment: Environment },
    change: { title: string; flags: Array<{ slug: string; config: FlagConfig }>; segments: Array<{ key: string; config: Required<SegmentValues> }> },
    actor: Actor,
    reviewers: string[],
    dryRun: boolean,
  ): Promise<{ id: string | null; outcome: ProposalOutcome }>;
}

/** What an apply did with a protected environment's change request. */
export type ProposalOutcome = 'opened' | 'updated' | 'unchanged';

export interface ApplyOptions {
  /** The project to change; without it, the one with the document's name (created when there is none). */
  projectKey?: string;
  /** Always create a new project with the document's name (an import into a new project). */
  newProject?: boolean;
  dryRun?: boolean;
  /** An owner's emergency write to protected environments (the route checks the role), as for direct writes. */
  bypassProtection?: boolean;
  /** What the document is called in the titles of change requests (the command line sends the file's name). */
  source?: string;
}

/**
 * A protected environment's change request as an apply leaves it: opened, updated or kept as it is
 * (`unchanged`), or, where the document changes nothing there, an open one an earlier apply opened,
 * left as it is (`left_open`). In a dry run, what would happen.
 */
export interface ProposedChangeRequest {
  environment: string;
  environmentKey: string;
  title: string;
  outcome: ProposalOutcome | 'left_open';
  /** What this apply proposes there, as plan steps (a flag the apply creates appears as an update from switched off); empty when left open. */
  changes: PlanStep[];
  /** Null only for a request a dry run would open. */
  id: string | null;
  /** The request in the admin API, and in the dashboard (null when `id` is). */
  path: string | null;
  dashboardPath: string | null;
}

export interface ApplyResult {
  projectKey: string | null;
  dryRun: boolean;
  /** What the apply writes (or would write) itself. */
  changes: PlanStep[];
  changeRequests: ProposedChangeRequest[];
}

/** The plan split between what apply writes and what each protected environment takes through a change request. */
interface RoutedPlan {
  direct: PlanStep[];
  proposals: Proposal[];
  /** Names of the environments whose flag configurations wait for change requests. */
  held: ReadonlySet<string>;
  /** Keys of the segment updates that wait for a change request. */
  heldSegments: ReadonlySet<string>;
}

interface Proposal {
  environment: Environment;
  steps: PlanStep[];
  flags: Array<{ slug: string; config: FlagConfig }>;
  segments: Array<{ key: string; config: Required<SegmentValues> }>;
}

/**
 * Flags as code (issue 21, docs/adr/0038): a project exported as one document, and a document applied
 * to a project in one transaction (or only planned, in a dry run). The document's format and the plan
 * are pure (project-document.ts); this service reads and writes through the stores and services of
 * projects, segments and flags, with an audit entry for every change and one for the whole apply.
 */
export class ProjectDocumentService {
  constructor(private readonly deps: ProjectDocumentServiceDeps) {}

  /** The project as a document (no keys, no secrets, no submissions); the same bytes on every export of an unchanged project. */
  async exportProject(projectKey: string): Promise<ProjectDocument> {
    const project = await this.deps.projects.getProject(projectKey);
    const names = project.environments.map((e) => e.name);
    if (new Set(names).size !== names.length) throw new AppError('conflict', message('documentDuplicateEnvironments', { projectKey }));
    const flags = await this.deps.store.listProjectFlags(this.deps.db, project.id);
    const segments = (await this.deps.segments.projectSegments(this.deps.db, project.id)).map(engineSegment);
    const forms = await this.deps.forms.documentForms(this.deps.db, project.id);
    const doc = projectDocument(project, flags, segments);
    // A project without forms exports the document of flags as code before issue 34, byte for byte.
    return Object.keys(forms).length > 0 ? { ...doc, forms } : doc;
  }

  /**
   * Makes a project match the document, all or nothing: the project named by `projectKey`, or else the
   * one named as the document names it (created when there is none, or always with `newProject`). Flags and segments not in the
   * document are deleted; environments not in it are kept. A dry run answers the same plan and writes nothing.
   */
  async apply(doc: ProjectDocument, options: ApplyOptions, actor: Actor): Promise<ApplyResult> {
    const problems = [...documentProblems(doc, 'body.document'), ...(await contentProblems(doc))];
    for (const slug of Object.keys(doc.flags)) {
      if (RESERVED_SLUGS.has(slug)) problems.push({ field: `body.document.flags.${slug}`, reason: `"${slug}" is reserved by the flag interface` });
    }
    if (problems.length > 0) throw AppError.validation(problems);
    const dryRun = options.dryRun === true;
    const bypass = options.bypassProtection === true;
    const target = options.newProject ? undefined : await this.targetProject(doc, options.projectKey);
    const guarded = !bypass && (target?.environments.some((e) => e.protected) ?? false);
    const reviewers = guarded && target && !dryRun ? await this.deps.protectedChanges.reviewersOf(target, actor) : [];
    const name = options.source ?? doc.project;
    const title = (environment: Environment) => `Apply ${name.length > 90 ? `${name.slice(0, 89)}…` : name} to ${environment.name}`.slice(0, 200);
    // A dry run reads in a transaction that it rolls back, so that it sees what an apply would see.
    const outcome = await this.deps.events
      .transaction(this.deps.db, async (trx, emit) => {
        const current = target ? await this.currentState(trx, target) : undefined;
        if (current) checkTypes(doc, current);
        checkFinalState(doc, current, target);
        const plan = planDocument(doc, current);
        const routed =
          target && !bypass ? routePlan(doc, target, plan) : { direct: plan, proposals: [], held: new Set<string>(), heldSegments: new Set<string>() };
        const answer = (
          environment: Environment,
          request: { title: string; outcome: ProposedChangeRequest['outcome']; changes: PlanStep[]; id: string | null },
        ): ProposedChangeRequest => {
          const key = target?.key ?? '';
          const { id } = request;
          return {
            environment: environment.name,
            environmentKey: environment.key,
            ...request,
            path: id === null ? null : `/admin/v1/projects/${key}/change-requests/${id}`,
            dashboardPath: id === null ? null : `/projects/${key}/changes/${id}`,
          };
        };
        // Each protected environment's request: proposed (after the writes, so that a request may propose
        // a flag this apply created, version 1), or an open one of an earlier apply, left as it is.
        const settle = async (project: Project): Promise<ProposedChangeRequest[]> => {
          const open = target ? await this.deps.protectedChanges.openRequests(trx, target) : [];
          const out: ProposedChangeRequest[] = [];
          for (const environment of project.environments) {
            const p = routed.proposals.find((x) => x.environment.id === environment.id);
            if (p) {
              const change = { title: title(environment), flags: p.flags, segments: p.segments };
              const { id, outcome } = await this.deps.protectedChanges.propose(trx, emit, { project, environment }, change, actor, reviewers, dryRun);
              out.push(answer(environment, { title: change.title, outcome, changes: p.steps, id }));
              continue;
            }
            const left = open.find((r) => r.environmentId === environment.id);
            if (left) out.push(answer(environment, { title: left.title, outcome: 'left_open', changes: [], id: left.id }));
          }
          return out;
        };
        const formSteps = async (project: Project | undefined): Promise<PlanStep[]> =>
          doc.forms === undefined
            ? []
            : (await this.deps.forms.applyDocumentForms(trx, project, doc.forms, actor, dryRun)).map((step) => ({ ...step, kind: 'form' as const }));
        if (dryRun) {
          const changes = [...routed.direct, ...(await formSteps(target))];
          throw new DryRun({ projectKey: target?.key ?? null, dryRun, changes, changeRequests: target ? await settle(target) : [] });
        }
        const project = await this.write(trx, emit, doc, target, routed, actor, bypass);
        routed.direct.push(...(await formSteps(project)));
        const changeRequests = await settle(project);
        const ids = (outcome: ProposalOutcome) => changeRequests.filter((r) => r.outcome === outcome).map((r) => r.id!);
        await this.deps.audit.record(trx, actor, {
          projectId: project.id,
          entity: 'project',
          entityId: project.key,
          action: 'project.document_applied',
          changes: {
            changes: { after: routed.direct.length },
            ...(ids('opened').length > 0 ? { changeRequests: { after: ids('opened') } } : {}),
            ...(ids('updated').length > 0 ? { changeRequestsUpdated: { after: ids('updated') } } : {}),
            ...bypassNote(bypass && project.environments.some((e) => e.protected)),
          },
        });
        return { projectKey: project.key, dryRun, changes: routed.direct, changeRequests };
      })
      .catch((error: unknown) => {
        if (error instanceof DryRun) return error.result;
        throw error;
      });
    return outcome;
  }

  private async targetProject(doc: ProjectDocument, projectKey: string | undefined): Promise<Project | undefined> {
    if (projectKey !== undefined) return this.deps.projects.getProject(projectKey);
    const named = (await this.deps.projects.listProjects()).filter((p) => p.name === doc.project);
    if (named.length > 1) throw new AppError('conflict', message('documentProjectAmbiguous', { name: doc.project, count: named.length }));
    return named[0];
  }

  private async currentState(trx: Executor, project: Project): Promise<CurrentState> {
    const envName = new Map(project.environments.map((e) => [e.id, e.name]));
    const flags = new Map<string, { type: Flag['type']; environments: Map<string, FlagSettings> }>();
    for (const flag of await this.deps.store.listProjectFlags(trx, project.id)) {
      const entry = flags.get(flag.slug) ?? { type: flag.type, environments: new Map() };
      entry.environments.set(envName.get(flag.environmentId)!, settingsOf(flag));
      flags.set(flag.slug, entry);
    }
    const segments = new Map((await this.deps.segments.projectSegments(trx, project.id)).map((s) => [s.key, engineSegment(s)]));
    return { environments: project.environments.map((e) => e.name), segments, flags };
  }

  private async write(
    trx: Executor,
    emit: Emit,
    doc: ProjectDocument,
    target: Project | undefined,
    routed: RoutedPlan,
    actor: Actor,
    bypassProtection: boolean,
  ): Promise<Project> {
    const changes = routed.direct;
    const { projects, segments, store, writes } = this.deps;
    const now = nowIso(this.deps.clock);
    let project = target ?? (await projects.createProjectIn(trx, emit, doc.project, doc.environments, actor));
    const newEnvironments = changes.filter((c) => c.kind === 'environment' && c.action === 'create').map((c) => c.key);
    for (const name of newEnvironments) {
      const env = await projects.createEnvironmentIn(trx, emit, project, name, actor);
      project = { ...project, environments: [...project.environments, env] };
    }
    const envByName = new Map(project.environments.map((e) => [e.name, e]));
    const upserts = Object.entries(doc.segments)
      .filter(([key]) => !routed.heldSegments.has(key))
      .map(([key, s]) => segmentOf(key, s));
    await segments.upsertSegments(trx, emit, project, project.key, upserts, actor, { bypassProtection });

    const rows = await store.listProjectFlags(trx, project.id);
    const bySlug = new Map<string, Flag[]>();
    for (const row of rows) bySlug.set(row.slug, [...(bySlug.get(row.slug) ?? []), row]);
    for (const [slug, flag] of Object.entries(doc.flags)) {
      const existing = bySlug.get(slug);
      if (!existing) {
        const created = project.environments.map((env) => {
          const wanted = flag.environments[env.name];
          // A protected environment gets the flag switched off; its change request sets the rest.
          const settings = wanted ? (routed.held.has(env.name) ? switchedOff(flag.type, wanted) : flagSettings(wanted)) : undefined;
          const first = Object.values(flag.environments)[0];
          const targeting = settings?.targeting ?? safeTargeting(flag.type, first?.variants ?? {}, first?.defaultVariant ?? null);
          return newRow(project, env.id, slug, flag.type, settings, targeting, now);
        });
        await writes.create(trx, emit, { project, slug, rows: created, actor });
        continue;
      }
      for (const row of existing) {
        const envName = project.environments.find((e) => e.id === row.environmentId)!.name;
        const wanted = flag.environments[envName];
        if (!wanted || routed.held.has(envName)) continue;
        const settings = flagSettings(wanted);
        if (canonical(documentFlagEnvironment(settingsOf(row))) === canonical(documentFlagEnvironment(settings))) continue;
        const next: Flag = { ...row, ...settings, enabled: enabledOf(row.type, settings.targeting), updatedAt: now };
        await writes.update(trx, emit, {
          project,
          environment: envByName.get(envName)!,
          before: row,
          after: next,
          actor,
          authority: { direct: { bypassProtection } },
          check: 'validated',
        });
      }
    }
    for (const [slug, existing] of bySlug) {
      if (slug in doc.flags) continue;
      await writes.delete(trx, emit, {
        project,
        slug,
        actor,
        authority: { direct: { bypassProtection } },
        changes: () => ({
          type: { before: existing[0]!.type },
          environments: { before: existing.map((f) => project.environments.find((e) => e.id === f.environmentId)!.key) },
        }),
      });
    }
    const removedSegments = changes.filter((c) => c.kind === 'segment' && c.action === 'delete').map((c) => c.key);
    await segments.deleteSegmentsIn(trx, emit, project, removedSegments, actor);
    return project;
  }
}

/**
 * Protected environments (issue 24) take a document's changes through change requests, one per
 * environment: its flags' configurations, and for the first one opened the segment updates (a segment
 * serves every environment, and a change request applies it to the project; two requests carrying it
 * would conflict on its version). A flag the apply creates is created switched off there and proposed as
 * the document sets it. What a change request cannot carry is refused as the direct write is: deleting
 * a flag or a segment while an environment is protected, and a flag's preview settings (409).
 */
function routePlan(doc: ProjectDocument, project: Project, plan: readonly PlanStep[]): RoutedPlan {
  const protectedEnvironments = project.environments.filter((e) => e.protected);
  const guarded = protectedEnvironments.filter((e) => doc.environments.includes(e.name));
  const held = new Set(guarded.map((e) => e.name));
  const proposals = new Map<string, Proposal>(protectedEnvironments.map((e) => [e.name, { environment: e, steps: [], flags: [], segments: [] }]));
  const direct: PlanStep[] = [];
  const segmentSteps: PlanStep[] = [];
  for (const step of plan) {
    if (step.kind === 'flag' && step.action === 'update' && held.has(step.environment)) {
      if (step.fields.includes('preview')) {
        throw new AppError('conflict', message('documentPreviewProtected', { slug: step.key, environment: step.environment }));
      }
      const proposal = proposals.get(step.environment)!;
      proposal.steps.push(step);
      proposal.flags.push({ slug: step.key, config: configOf(flagSettings(doc.flags[step.key]!.environments[step.environment]!)) });
      continue;
    }
    if (step.kind === 'flag' && step.action === 'delete') {
      for (const environment of project.environments) checkWritable(environment, project.key, {});
    } else if (step.kind === 'segment' && step.action === 'delete') {
      checkSegmentsWritable(project, {});
    } else if (step.kind === 'segment' && step.action === 'update' && protectedEnvironments.length > 0) {
      segmentSteps.push(step);
      continue;
    }
    direct.push(step);
    if (step.kind === 'flag' && step.action === 'create') {
      const flag = doc.flags[step.key]!;
      for (const environment of guarded) {
        const wanted = flag.environments[environment.name]!;
        const fields = changedFields({ ...documentFlagEnvironment(switchedOff(flag.type, wanted)) }, { ...documentFlagEnvironment(flagSettings(wanted)) });
        if (fields.length === 0) continue;
        const proposal = proposals.get(environment.name)!;
        proposal.steps.push({ action: 'update', kind: 'flag', key: step.key, environment: environment.name, fields });
        proposal.flags.push({ slug: step.key, config: configOf(flagSettings(wanted)) });
      }
    }
  }
  if (segmentSteps.length > 0) {
    // The first protected environment with a request (in the project's order), else the first one.
    const first = [...proposals.values()].find((p) => p.steps.length > 0) ?? proposals.get(protectedEnvironments[0]!.name)!;
    first.steps.unshift(...segmentSteps);
    for (const step of segmentSteps) {
      const { name, description, match, conditions } = segmentOf(step.key, doc.segments[step.key]!);
      first.segments.push({ key: step.key, config: { name, description, match, conditions } });
    }
  }
  return {
    direct,
    proposals: [...proposals.values()].filter((p) => p.steps.length > 0),
    held,
    heldSegments: new Set(segmentSteps.map((s) => s.key)),
  };
}

/** A new flag in a protected environment: the document's settings, switched off until its change request is applied. */
function switchedOff(type: Flag['type'], wanted: DocumentFlagEnvironment): FlagSettings {
  const settings = flagSettings(wanted);
  return { ...settings, targeting: safeTargeting(type, settings.targeting.variants, settings.targeting.defaultVariant) };
}

/** Settings as a change request carries them (preview settings are not part of a change). */
const configOf = (s: FlagSettings): FlagConfig =>
  flagConfig({ targeting: s.targeting, payload: s.payload, expiredAt: s.expiredAt, description: s.description } as Flag);

/** Thrown to roll a dry run's read transaction back while answering its plan. */
class DryRun extends Error {
  constructor(readonly result: ApplyResult) {
    super('dry run');
  }
}

function newRow(
  project: Project,
  environmentId: string,
  slug: string,
  type: Flag['type'],
  settings: FlagSettings | undefined,
  targeting: Flag['targeting'],
  now: string,
): Flag {
  return {
    id: newId(),
    projectId: project.id,
    environmentId,
    slug,
    type,
    enabled: enabledOf(type, targeting),
    targeting,
    payload: settings?.payload ?? null,
    expiredAt: settings?.expiredAt ?? null,
    description: settings?.description ?? '',
    isPreview: settings?.isPreview ?? false,
    previewName: settings?.previewName ?? null,
    previewContent: settings?.previewContent ?? null,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
}

/** A flag's type is fixed: a document that changes it is refused (delete the flag first). */
function checkTypes(doc: ProjectDocument, current: CurrentState): void {
  for (const [slug, flag] of Object.entries(doc.flags)) {
    const existing = current.flags.get(slug)?.type;
    if (existing !== undefined && existing !== flag.type) {
      throw new AppError('conflict', message('documentTypeConflict', { slug, existing, wanted: flag.type }));
    }
  }
}

/**
 * Every environment as it will be, checked by the targeting engine: the document's environments as the
 * document says, environments it does not list with their flags as stored (less the deleted ones, plus
 * new flags switched off). The first problem is a 400 naming its path in the document.
 */
function checkFinalState(doc: ProjectDocument, current: CurrentState | undefined, target: Project | undefined): void {
  const segments: Segment[] = Object.entries(doc.segments).map(([key, s]) => segmentOf(key, s));
  const names = [...doc.environments, ...(current?.environments ?? []).filter((n) => !doc.environments.includes(n))];
  for (const envName of names) {
    const inDocument = doc.environments.includes(envName);
    const flags: TargetedFlag[] = Object.entries(doc.flags).map(([slug, flag]) => {
      if (inDocument) return { key: slug, type: flag.type, targeting: flagSettings(flag.environments[envName]!).targeting };
      const stored = current?.flags.get(slug)?.environments.get(envName);
      const first = Object.values(flag.environments)[0];
      return { key: slug, type: flag.type, targeting: stored?.targeting ?? safeTargeting(flag.type, first?.variants ?? {}, first?.defaultVariant ?? null) };
    });
    const problem = environmentProblem(flags, segments);
    if (!problem) continue;
    const where =
      problem.flagKey !== undefined
        ? inDocument
          ? `body.document.flags.${problem.flagKey}.environments.${envName}`
          : `body.document.flags.${problem.flagKey} (environment ${envName} of project ${target?.key ?? ''}, not in the document)`
        : `body.document.segments.${problem.segmentKey ?? ''}`;
    const field = [where, ...problem.path.split('/').filter(Boolean)].join('.');
    throw AppError.validation([{ field, reason: problem.message }]);
  }
}

async function contentProblems(doc: ProjectDocument): Promise<FieldProblem[]> {
  const problems: FieldProblem[] = [];
  for (const [slug, flag] of Object.entries(doc.flags)) {
    for (const [envName, e] of Object.entries(flag.environments)) {
      if (e.preview?.content === undefined || e.preview.content === null) continue;
      problems.push(...(await checkPreviewContent(e.preview.content, `body.document.flags.${slug}.environments.${envName}.preview.content`)));
    }
  }
  return problems;
}
