import { type Selectable, sql } from 'kysely';
import { fromBool, fromJson, isUniqueViolation, newId, toBool, toJson } from '../db/codec.ts';
import type { Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { FlagTargeting, FlagType } from '../targeting/targeting.ts';
import type { Flag } from './flag.ts';
import { enabledOf, safeTargeting } from './flag-serve.ts';
import type { FlagsTable } from './flag.table.ts';

const toFlag = (row: Selectable<FlagsTable>): Flag => ({
  id: row.id,
  projectId: row.project_id,
  environmentId: row.environment_id,
  slug: row.slug,
  type: row.type as FlagType,
  enabled: toBool(row.enabled),
  targeting: toTargeting(row),
  payload: fromJson(row.payload),
  expiredAt: row.expired_at,
  description: row.description,
  isPreview: toBool(row.is_preview),
  previewName: row.preview_name,
  previewContent: fromJson(row.preview_content),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  version: row.version,
  tags: JSON.parse(row.tags) as string[],
  archivedAt: row.archived_at,
});

const toRow = (f: Flag): Selectable<FlagsTable> => ({
  id: f.id,
  project_id: f.projectId,
  environment_id: f.environmentId,
  slug: f.slug,
  enabled: fromBool(f.enabled),
  payload: toJson(f.payload),
  expired_at: f.expiredAt,
  description: f.description,
  is_preview: fromBool(f.isPreview),
  preview_name: f.previewName,
  preview_content: toJson(f.previewContent),
  created_at: f.createdAt,
  updated_at: f.updatedAt,
  type: f.type,
  variants: JSON.stringify(f.targeting.variants),
  default_variant: f.targeting.defaultVariant,
  state: f.targeting.state,
  rules: JSON.stringify(f.targeting.rules),
  prerequisites: JSON.stringify(f.targeting.prerequisites),
  json_logic: f.targeting.jsonLogic === undefined ? null : JSON.stringify(f.targeting.jsonLogic),
  metadata: f.targeting.metadata === undefined ? null : JSON.stringify(f.targeting.metadata),
  version: f.version,
  tags: JSON.stringify(f.tags ?? []),
  archived_at: f.archivedAt ?? null,
});

function toTargeting(row: Selectable<FlagsTable>): FlagTargeting {
  const targeting: FlagTargeting = {
    state: row.state === 'DISABLED' ? 'DISABLED' : 'ENABLED',
    variants: JSON.parse(row.variants) as FlagTargeting['variants'],
    defaultVariant: row.default_variant,
    prerequisites: JSON.parse(row.prerequisites) as FlagTargeting['prerequisites'],
    rules: JSON.parse(row.rules) as FlagTargeting['rules'],
  };
  if (row.json_logic !== null) targeting.jsonLogic = JSON.parse(row.json_logic);
  if (row.metadata !== null) targeting.metadata = JSON.parse(row.metadata) as FlagTargeting['metadata'];
  return targeting;
}

/** The row each flag of listEnvironmentFlags was read from, to recognise an unchanged row by its columns. */
const rowOfFlag = new WeakMap<Flag, Selectable<FlagsTable>>();

function sameRow(a: Selectable<FlagsTable> | undefined, b: Selectable<FlagsTable>): boolean {
  if (a === undefined) return false;
  for (const column in b) if (a[column as keyof FlagsTable] !== b[column as keyof FlagsTable]) return false;
  return true;
}

export class FlagStore {
  /** Inserts the rows of one new flag; a slug already in the project is a conflict. */
  async insertFlags(db: Executor, flags: Flag[], projectKey: string): Promise<void> {
    if (flags.length === 0) return;
    try {
      // Stay far below the bound-parameter limits of both engines (a flagd import may add many).
      for (let i = 0; i < flags.length; i += 200)
        await db
          .insertInto('flags')
          .values(flags.slice(i, i + 200).map(toRow))
          .execute();
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new AppError('conflict', message('flagExists', { slug: flags[0]!.slug, projectKey }));
      }
      throw error;
    }
  }

  async slugExistsInProject(db: Executor, projectId: string, slug: string): Promise<boolean> {
    const row = await db.selectFrom('flags').select('id').where('project_id', '=', projectId).where('slug', '=', slug).executeTakeFirst();
    return row !== undefined;
  }

  async findFlag(db: Executor, environmentId: string, slug: string): Promise<Flag | undefined> {
    const row = await db.selectFrom('flags').selectAll().where('environment_id', '=', environmentId).where('slug', '=', slug).executeTakeFirst();
    return row ? toFlag(row) : undefined;
  }

  /**
   * Writes a flag and increments its version. With `expectedVersion`, only while the row is still at that
   * version (a change request's base): false when another write came in between.
   */
  async updateFlag(db: Executor, flag: Flag, expectedVersion?: number): Promise<boolean> {
    const { id, project_id, environment_id, slug, created_at, version, ...changes } = toRow(flag);
    let query = db
      .updateTable('flags')
      .set({ ...changes, version: sql<number>`version + 1` })
      .where('id', '=', id);
    if (expectedVersion !== undefined) query = query.where('version', '=', expectedVersion);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Every flag of an environment, newest first. With `previous` (flags this method returned before), a
   * row whose columns are all as they were when one of them was read comes back as that same object,
   * unparsed: the read model keeps what it derived from a Flag object as long as the object (docs/adr/0028).
   * Treat returned flags as immutable.
   */
  async listEnvironmentFlags(db: Executor, environmentId: string, previous?: readonly Flag[]): Promise<Flag[]> {
    const rows = await db
      .selectFrom('flags')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const known = new Map<string, Flag>();
    if (previous) for (const flag of previous) known.set(flag.id, flag);
    return rows.map((row) => {
      const old = known.get(row.id);
      if (old !== undefined && sameRow(rowOfFlag.get(old), row)) return old;
      const flag = toFlag(row);
      rowOfFlag.set(flag, row);
      return flag;
    });
  }

  /** The flags of an environment with these slugs (unknown slugs are left out). */
  async findFlags(db: Executor, environmentId: string, slugs: readonly string[]): Promise<Flag[]> {
    const flags: Flag[] = [];
    // Stay far below the bound-parameter limits of both engines.
    for (let i = 0; i < slugs.length; i += 200) {
      const rows = await db
        .selectFrom('flags')
        .selectAll()
        .where('environment_id', '=', environmentId)
        .where('slug', 'in', slugs.slice(i, i + 200))
        .execute();
      flags.push(...rows.map(toFlag));
    }
    return flags;
  }

  /** The flags of an environment that have prerequisites: every prerequisite edge of the environment starts at one of them. */
  async listFlagsWithPrerequisites(db: Executor, environmentId: string): Promise<Flag[]> {
    const rows = await db.selectFrom('flags').selectAll().where('environment_id', '=', environmentId).where('prerequisites', '!=', '[]').execute();
    return rows.map(toFlag);
  }

  async listProjectFlags(db: Executor, projectId: string): Promise<Flag[]> {
    const rows = await db.selectFrom('flags').selectAll().where('project_id', '=', projectId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map(toFlag);
  }

  /**
   * Changes what a slug shares across environments: the slug itself, its tags, its archived time. Returns
   * the environments of its rows; a new slug the project has is a conflict.
   */
  async updateSlug(
    db: Executor,
    projectId: string,
    slug: string,
    changes: { slug?: string; tags?: string[]; archivedAt?: string | null; updatedAt: string },
    projectKey: string,
  ): Promise<string[]> {
    try {
      const rows = await db
        .updateTable('flags')
        .set({
          ...(changes.slug !== undefined && { slug: changes.slug }),
          ...(changes.tags !== undefined && { tags: JSON.stringify(changes.tags) }),
          ...(changes.archivedAt !== undefined && { archived_at: changes.archivedAt }),
          updated_at: changes.updatedAt,
        })
        .where('project_id', '=', projectId)
        .where('slug', '=', slug)
        .returning('environment_id')
        .execute();
      return rows.map((r) => r.environment_id);
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', message('flagExists', { slug: changes.slug ?? slug, projectKey }));
      throw error;
    }
  }

  /** Deletes a slug in every environment and returns the environments it was in. */
  async deleteSlug(db: Executor, projectId: string, slug: string): Promise<string[]> {
    const rows = await db.deleteFrom('flags').where('project_id', '=', projectId).where('slug', '=', slug).returning('environment_id').execute();
    return rows.map((r) => r.environment_id);
  }

  /**
   * Copies one row per slug of the project (its oldest) into a new environment, with the safe targeting
   * of a new environment: same type and variants, no rules, nothing switched on (flag-serve.ts).
   */
  async copyProjectFlagsToEnvironment(db: Executor, projectId: string, environmentId: string, now: string): Promise<void> {
    const existing = await db
      .selectFrom('flags')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('environment_id', '!=', environmentId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const seen = new Set<string>();
    const rows: Selectable<FlagsTable>[] = [];
    for (const row of existing) {
      if (seen.has(row.slug)) continue;
      seen.add(row.slug);
      const flag = toFlag(row);
      const targeting = safeTargeting(flag.type, flag.targeting.variants, flag.targeting.defaultVariant);
      rows.push(toRow({ ...flag, id: newId(), environmentId, targeting, enabled: enabledOf(flag.type, targeting), updatedAt: now, version: 1 }));
    }
    // Stay far below the bound-parameter limits of both engines.
    for (let i = 0; i < rows.length; i += 200)
      await db
        .insertInto('flags')
        .values(rows.slice(i, i + 200))
        .execute();
  }
}
