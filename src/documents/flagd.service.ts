import { type Actor, type AuditLog, changesOf } from '../audit/index.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { DomainEvents } from '../events/index.ts';
import { checkWritable, type ProjectService, type WriteOptions } from '../projects/index.ts';
import { engineSegment, type SegmentService } from '../segments/index.ts';
import { environmentSteps, type FlagdDefinition, inSlices, type TargetedFlag, toFlagdDefinition, unknownRefProblem } from '../targeting/index.ts';
import { parseSteps } from '../targeting/flagd-import.ts';
import {
  AUDITED_FLAG_FIELDS,
  auditedFlag,
  enabledOf,
  type Flag,
  type FlagWrites,
  type FlagStore,
  RESERVED_SLUGS,
  safeTargeting,
  SLUG_MAX_LENGTH,
  SLUG_REGEX,
  targetedFlag,
} from '../flags/index.ts';

export interface FlagdServiceDeps {
  db: Db;
  store: FlagStore;
  projects: ProjectService;
  segments: SegmentService;
  /** Announces flag.changed for every flag an import changes (segment.changed comes from the segments). */
  events: DomainEvents;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
  /** The one write door of a flag (protection, guards, store, audit, flag.changed); the import validates the environment at once. */
  writes: FlagWrites;
}

/** What an import did, by flag slug and segment key. */
export interface FlagdImportResult {
  created: string[];
  updated: string[];
  unchanged: string[];
  segments: string[];
}

const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * An environment as a flagd flag definition, and back (issue 18; docs/adr/0025). The engine does the
 * format (toFlagdDefinition, parseFlagdDefinition); this service does storage: one transaction per
 * import, the other environments of a new flag, the audit log.
 */
export class FlagdService {
  constructor(private readonly deps: FlagdServiceDeps) {}

  /** The environment's flags (by slug) and the project's segments as a flagd definition. */
  async exportEnvironment(projectKey: string, environmentKey: string): Promise<FlagdDefinition> {
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    const flags = (await this.deps.store.listEnvironmentFlags(this.deps.db, environment.id)).sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
    const segments = (await this.deps.segments.projectSegments(this.deps.db, project.id)).map(engineSegment);
    return toFlagdDefinition(flags.map(targetedFlag), segments);
  }

  /**
   * Imports a flagd definition into one environment, all or nothing: each flag in it is created or
   * updated there (its payload, description and preview settings kept), flags not in it are left alone,
   * its segments (`$evaluators` shaped like segments) are created or updated in the project. A flag new
   * to the project gets, in the other environments, the same variants with nothing switched on
   * (flag-serve.ts `safeTargeting`). An invalid definition is a 400 naming the first problem's JSON path.
   */
  async importEnvironment(projectKey: string, environmentKey: string, doc: unknown, actor: Actor, options: WriteOptions = {}): Promise<FlagdImportResult> {
    // Validated in slices: a large definition must not hold the event loop (issue 29).
    const parsed = await inSlices(parseSteps(doc));
    if (parsed.problem) throw invalid(parsed.problem.path, parsed.problem.message);
    for (const flag of parsed.flags) {
      if (flag.key.length > SLUG_MAX_LENGTH || !SLUG_REGEX.test(flag.key) || RESERVED_SLUGS.has(flag.key)) {
        throw invalid(
          `/flags/${escape(flag.key)}`,
          `${flag.key} is not a flag slug Flagpost accepts (letters, digits and symbols, with . _ - inside; not preview or code-refs)`,
        );
      }
    }
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    checkWritable(environment, projectKey, options);
    const now = nowIso(this.deps.clock);
    return this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      const projectFlags = await this.deps.store.listProjectFlags(trx, project.id);
      const typeOf = new Map(projectFlags.map((f) => [f.slug, f.type]));
      for (const flag of parsed.flags) {
        const existing = typeOf.get(flag.key);
        if (existing !== undefined && existing !== flag.type) {
          throw new AppError('conflict', message('flagdTypeConflict', { slug: flag.key, existing, imported: flag.type }));
        }
      }
      const here = new Map(projectFlags.filter((f) => f.environmentId === environment.id).map((f) => [f.slug, f]));
      const imported = new Map(parsed.flags.map((f) => [f.key, f]));
      const stored = await this.deps.segments.projectSegments(trx, project.id);
      const importedSegments = new Map(parsed.segments.map((s) => [s.key, s]));
      const segments = [...stored.map(engineSegment).filter((s) => !importedSegments.has(s.key)), ...parsed.segments];
      // The environment as it will be: its other flags may be prerequisites of imported ones, and back.
      const after: TargetedFlag[] = [...[...here.values()].filter((f) => !imported.has(f.slug)).map(targetedFlag), ...parsed.flags];
      const problem = (await inSlices(environmentSteps(after, segments))) ?? unknownRefProblem(parsed.flags, new Set(segments.map((s) => s.key)));
      if (problem) {
        const path =
          problem.flagKey !== undefined
            ? `/flags/${escape(problem.flagKey)}${problem.path.replace(/^\/jsonLogic(?=\/|$)/, '/targeting')}`
            : `/$evaluators/${escape(problem.segmentKey ?? '')}${problem.path}`;
        throw invalid(path, problem.message);
      }

      // A flagd evaluator carries no name or description: an existing segment keeps its own, so that an
      // export imported back changes nothing (it used to rename each segment to its key, a refused segment
      // write while an environment is protected).
      const storedByKey = new Map(stored.map((s) => [s.key, s]));
      const upserts = parsed.segments.map((s) => {
        const known = storedByKey.get(s.key);
        return known ? { ...s, name: known.name, description: known.description } : s;
      });
      const changedSegments = await this.deps.segments.upsertSegments(trx, emit, project, projectKey, upserts, actor, options);
      const result: FlagdImportResult = { created: [], updated: [], unchanged: [], segments: changedSegments };
      for (const [i, flag] of parsed.flags.entries()) {
        if (i % YIELD_EVERY === YIELD_EVERY - 1) await nextTurn();
        const before = here.get(flag.key);
        if (before) {
          const next: Flag = { ...before, targeting: flag.targeting, enabled: enabledOf(before.type, flag.targeting), updatedAt: now };
          const changes = changesOf(auditedFlag(before), auditedFlag(next), AUDITED_FLAG_FIELDS);
          if (Object.keys(changes).length === 0) {
            result.unchanged.push(flag.key);
            continue;
          }
          await this.deps.writes.update(trx, emit, {
            project,
            environment,
            before,
            after: next,
            actor,
            authority: { direct: options },
            check: 'validated',
          });
          result.updated.push(flag.key);
          continue;
        }
        const isNew = !typeOf.has(flag.key);
        const rows = project.environments
          .filter((env) => env.id === environment.id || isNew)
          .map((env): Flag => {
            const targeting = env.id === environment.id ? flag.targeting : safeTargeting(flag.type, flag.targeting.variants, flag.targeting.defaultVariant);
            return {
              id: newId(),
              version: 1,
              projectId: project.id,
              environmentId: env.id,
              slug: flag.key,
              type: flag.type,
              enabled: enabledOf(flag.type, targeting),
              targeting,
              payload: null,
              expiredAt: null,
              description: '',
              isPreview: false,
              previewName: null,
              previewContent: null,
              createdAt: now,
              updatedAt: now,
            };
          });
        const own = rows.find((r) => r.environmentId === environment.id)!;
        await this.deps.writes.create(trx, emit, { project, slug: flag.key, rows, actor, audited: { row: own, environmentKey } });
        result.created.push(flag.key);
      }
      await this.deps.audit.record(trx, actor, {
        projectId: project.id,
        entity: 'environment',
        entityId: environment.key,
        environmentKey,
        action: 'environment.flagd_imported',
        changes: {
          created: { after: result.created },
          updated: { after: result.updated },
          unchanged: { after: result.unchanged },
          segments: { after: result.segments },
        },
      });
      return result;
    });
  }
}

function invalid(path: string, reason: string): AppError {
  return new AppError('validation', message('flagdInvalid', { path: path || '/', reason }), { details: [{ field: `body${path}`, reason }] });
}

/**
 * Flags written between two turns of the event loop. A transaction's queries chain promises that are
 * already resolved, so without a turn a large import holds the event loop until it commits (issue 29):
 * other requests (health, OFREP from the read model) are served in between.
 */
const YIELD_EVERY = 25;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
