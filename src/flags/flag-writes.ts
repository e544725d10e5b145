import { type Actor, type AuditLog, changesOf, type FieldChange } from '../audit/index.ts';
import type { Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { Emit } from '../events/index.ts';
import { bypassNote, checkWritable, type Environment, type Project, type WriteOptions } from '../projects/index.ts';
import { engineSegment, type SegmentService } from '../segments/index.ts';
import type { Segment } from '../targeting/index.ts';
import { AUDITED_FLAG_FIELDS, auditedFlag, byNewest, type Flag } from './flag.ts';
import type { FlagStore } from './flag.store.ts';
import { checkEnvironment } from './targeting-check.ts';

// The one write door of a flag (docs/architecture.md, "One write door per aggregate"). Every path that
// changes a flag's rows goes through it: admin writes (flag.service.ts), change requests, promotion and
// revert (through FlagService.applyConfig), the flagd import and flags as code (documents/). In one
// place it checks protection, validates, asks the guards, writes the store, records the audit entry and
// announces the change, so that a rule added once holds on every path.
//
// Every method runs in the caller's transaction (`trx`, `emit`: see "Transactions" in
// docs/architecture.md); a refusal throws and the caller's whole transaction rolls back.

/** One change of a flag, as the guards see it before it is written. */
export type FlagWrite =
  /** A new flag: its rows, one per environment it is created in. */
  | { kind: 'create'; project: Project; slug: string; rows: readonly Flag[]; actor: Actor }
  /** One flag in one environment, before and after. */
  | { kind: 'update'; project: Project; environment: Environment; before: Flag; after: Flag; actor: Actor; owner?: 'release' }
  /** A flag deleted from every environment of its project. */
  | { kind: 'delete'; project: Project; slug: string; actor: Actor };

/**
 * A rule every write of a flag must keep, whichever path it takes (the admin API, a change request,
 * the flagd import, flags as code). The experiments and releases rooms add theirs, such as "no hand edit
 * of a split rule owned by a running experiment or an active release": the guard reads what it needs in
 * `trx` and throws an `AppError` (a `conflict` naming what owns the flag) to refuse. Guards run in the
 * order they were added, after protection and validation and before the store is written. A path that a
 * guard must let through (the experiment's own writes) says so in `FlagWrite` terms the guard can read,
 * such as its actor.
 */
export interface FlagWriteGuard {
  /** What it guards, for the reader of the composition (and the log of a refusal). */
  readonly name: string;
  check(trx: Executor, write: FlagWrite): Promise<void>;
}

/**
 * How a write passed protection: a direct write (`WriteOptions`: refused in a protected environment
 * unless an owner bypasses it, which the audit entry records), or an approved change request being
 * applied (`reviewed`), which protection exists to let through.
 */
export type WriteAuthority = { direct: WriteOptions } | { reviewed: true };

export interface FlagWritesDeps {
  store: FlagStore;
  segments: Pick<SegmentService, 'projectSegments'>;
  audit: Pick<AuditLog, 'record'>;
}

export class FlagWrites {
  private readonly guards: FlagWriteGuard[] = [];

  constructor(private readonly deps: FlagWritesDeps) {}

  /** Adds a rule every later write must keep (at composition, like a domain event subscription). */
  guard(guard: FlagWriteGuard): void {
    this.guards.push(guard);
  }

  /**
   * Creates a flag's rows (they are valid: a new flag starts with safe targeting, or its caller validated
   * the environment it joins). The audit entry describes `audited` (the row of the environment a flagd
   * import targets; the first row otherwise), with its environment's key when given.
   */
  async create(
    trx: Executor,
    emit: Emit,
    write: {
      project: Project;
      slug: string;
      rows: readonly Flag[];
      actor: Actor;
      audited?: { row: Flag; environmentKey: string };
      /** Fields added to the audit entry (the bypass of a protection). */
      note?: Record<string, FieldChange>;
    },
  ): Promise<void> {
    const { project, slug, rows, actor } = write;
    await this.checkGuards(trx, { kind: 'create', project, slug, rows, actor });
    await this.deps.store.insertFlags(trx, [...rows], project.key);
    const described = write.audited?.row ?? rows[0];
    await this.deps.audit.record(trx, actor, {
      projectId: project.id,
      entity: 'flag',
      entityId: slug,
      ...(write.audited ? { environmentKey: write.audited.environmentKey } : {}),
      action: 'flag.created',
      changes: { ...(described ? changesOf(null, auditedFlag(described), AUDITED_FLAG_FIELDS) : {}), ...write.note },
    });
    await emit({ type: 'flag.changed', projectId: project.id, slug, environmentIds: rows.map((r) => r.environmentId) });
  }

  /**
   * Writes one flag of one environment: protection (`authority`), validation with what the change can
   * affect in its environment (unless `validated`: the caller checked the whole environment at once, as
   * an import does), the guards, the store (a row written since `expectedVersion` is a conflict), the
   * audit entry (with `note`, and the bypass of a protection) and `flag.changed`. Answers the flags and
   * segments it validated with (empty when `validated`), for the flagd portability of the answer.
   */
  async update(
    trx: Executor,
    emit: Emit,
    write: {
      project: Project;
      environment: Environment;
      before: Flag;
      after: Flag;
      actor: Actor;
      authority: WriteAuthority;
      /**
       * `at`: the field prefix of validation problems (`body`, `flags.<slug>`); `validate: false` when the
       * write cannot change what is checked (no targeting touched). `validated`: the caller checked the
       * whole environment at once.
       */
      check: { at: string; validate: boolean } | 'validated';
      expectedVersion?: number;
      note?: Record<string, FieldChange>;
      /** The write of the owner of a rule (a release moving its own rule), which its guard lets through. */
      owner?: 'release';
    },
  ): Promise<{ envFlags: Flag[]; segments: Segment[] }> {
    const { project, environment, before, after, actor, authority } = write;
    checkWritable(environment, project.key, 'direct' in authority ? authority.direct : { bypassProtection: true });
    const neighbourhood = write.check === 'validated' ? { flags: [], segments: [] } : await this.neighbourhoodOf(trx, project, environment, after);
    if (write.check !== 'validated' && write.check.validate) checkEnvironment(neighbourhood.flags, neighbourhood.segments, before.slug, write.check.at);
    await this.checkGuards(trx, { kind: 'update', project, environment, before, after, actor, owner: write.owner });
    if (!(await this.deps.store.updateFlag(trx, after, write.expectedVersion))) {
      throw new AppError('conflict', message('changeConflict', { slug: before.slug, environment: environment.name }));
    }
    const bypassed = 'direct' in authority && authority.direct.bypassProtection && environment.protected;
    await this.deps.audit.record(trx, actor, {
      projectId: before.projectId,
      entity: 'flag',
      entityId: before.slug,
      environmentKey: environment.key,
      action: 'flag.updated',
      changes: { ...changesOf(auditedFlag(before), auditedFlag(after), AUDITED_FLAG_FIELDS), ...write.note, ...bypassNote(bypassed) },
    });
    await emit({ type: 'flag.changed', projectId: before.projectId, slug: before.slug, environmentIds: [environment.id] });
    return { envFlags: neighbourhood.flags, segments: neighbourhood.segments };
  }

  /**
   * Deletes a flag from every environment of its project: protection of each (`authority`), the guards,
   * the store, the audit entry (`changes`: what the caller knows of what went, plus the bypass of a
   * protection) and `flag.deleted`. Answers the environments it was deleted from (none: not found).
   */
  async delete(
    trx: Executor,
    emit: Emit,
    write: {
      project: Project;
      slug: string;
      actor: Actor;
      authority: WriteAuthority;
      /** The audit entry's changes, from the environments the flag was deleted from. */
      changes: (environmentIds: readonly string[]) => Record<string, FieldChange>;
    },
  ): Promise<string[]> {
    const { project, slug, actor, authority } = write;
    for (const environment of project.environments) {
      checkWritable(environment, project.key, 'direct' in authority ? authority.direct : { bypassProtection: true });
    }
    await this.checkGuards(trx, { kind: 'delete', project, slug, actor });
    const environmentIds = await this.deps.store.deleteSlug(trx, project.id, slug);
    if (environmentIds.length === 0) return environmentIds;
    const bypassed = 'direct' in authority && authority.direct.bypassProtection && project.environments.some((e) => e.protected);
    await this.deps.audit.record(trx, actor, {
      projectId: project.id,
      entity: 'flag',
      entityId: slug,
      action: 'flag.deleted',
      changes: { ...write.changes(environmentIds), ...bypassNote(bypassed) },
    });
    await emit({ type: 'flag.deleted', projectId: project.id, slug, environmentIds });
    return environmentIds;
  }

  private async checkGuards(trx: Executor, write: FlagWrite): Promise<void> {
    for (const guard of this.guards) await guard.check(trx, write);
  }

  /**
   * What a change of one flag can affect, with `changed` in place of its stored row: the flags joined to
   * it by prerequisites (either way, transitively), newest first as the environment lists them, and the
   * project's segments. Validation and the flagd portability of the changed flag depend on nothing else,
   * so a write costs the same in an environment of ten flags or of ten thousand (docs/adr/0028).
   */
  private async neighbourhoodOf(trx: Executor, project: Project, environment: Environment, changed: Flag): Promise<{ flags: Flag[]; segments: Segment[] }> {
    const graph = new Map<string, Flag>();
    for (const f of await this.deps.store.listFlagsWithPrerequisites(trx, environment.id)) graph.set(f.slug, f);
    graph.set(changed.slug, changed);
    // Every prerequisite edge starts at a flag with prerequisites; its target may have none.
    const targets = new Set<string>();
    for (const f of graph.values()) for (const p of f.targeting.prerequisites) if (!graph.has(p.flag)) targets.add(p.flag);
    for (const f of await this.deps.store.findFlags(trx, environment.id, [...targets])) graph.set(f.slug, f);
    const flags = connectedTo(changed.slug, graph).sort(byNewest);
    const segments = (await this.deps.segments.projectSegments(trx, project.id)).map(engineSegment);
    return { flags, segments };
  }
}

/** The flags joined to `slug` by prerequisites in either direction, `slug`'s own flag included. */
function connectedTo(slug: string, flags: ReadonlyMap<string, Flag>): Flag[] {
  const edges = new Map<string, string[]>();
  const link = (a: string, b: string) => edges.set(a, [...(edges.get(a) ?? []), b]);
  for (const f of flags.values()) {
    for (const p of f.targeting.prerequisites) {
      link(f.slug, p.flag);
      link(p.flag, f.slug);
    }
  }
  const seen = new Set([slug]);
  const queue = [slug];
  while (queue.length > 0) {
    for (const next of edges.get(queue.pop()!) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return [...seen].flatMap((s) => (flags.has(s) ? [flags.get(s)!] : []));
}
