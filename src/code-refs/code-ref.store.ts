import { sql } from 'kysely';
import type { Dialect, Executor } from '../db/database.ts';
import { newId } from '../db/codec.ts';
import type { CodeReferenceFilter, CodeReferenceRemoval, CodeReferenceRow, CodeReferenceUpload, StoredCodeReference, UploadScope } from './code-ref.ts';

/** Rows per INSERT, far below the bound-parameter limits of SQLite and PostgreSQL. */
const CHUNK = 500;
/** References kept per removal record, to show where the flag was last used. */
const LAST_REFERENCES = 20;

export class CodeRefStore {
  constructor(private readonly dialect: Dialect) {}

  /**
   * Replaces the references of one upload. `scope: 'slugs'` is contract D12: for each slug of the upload,
   * the rows of that slug on (projectName, branch). `scope: 'branch'` (the scanner's complete uploads,
   * ADR 0019) replaces the whole (projectName, branch): slugs it no longer reports lose their rows and
   * get a removal record; slugs reported again lose theirs. Must run inside the caller's transaction so
   * that a failure changes nothing.
   */
  async replace(trx: Executor, projectId: string, upload: CodeReferenceUpload, scope: UploadScope, updatedAt: string): Promise<{ removedSlugs: string[] }> {
    // Two uploads of one scope at once must not both keep their rows: on PostgreSQL (read committed) the
    // second one's delete would not see the first one's inserts. SQLite runs one write at a time.
    if (this.dialect === 'postgres') {
      await sql`select pg_advisory_xact_lock(hashtext(${`code_refs\n${projectId}\n${upload.projectName}\n${upload.branch}`}))`.execute(trx);
    }
    const slugs = Object.keys(upload.references);
    const inScope = () =>
      trx.deleteFrom('code_refs').where('project_id', '=', projectId).where('project_name', '=', upload.projectName).where('branch', '=', upload.branch);
    let removedSlugs: string[] = [];
    if (scope === 'branch') {
      const reported = new Set(slugs);
      const previous = await trx
        .selectFrom('code_refs')
        .select(['slug', 'file_path', 'line_number', 'line_content'])
        .where('project_id', '=', projectId)
        .where('project_name', '=', upload.projectName)
        .where('branch', '=', upload.branch)
        .orderBy('slug')
        .orderBy('file_path')
        .orderBy('line_number')
        .execute();
      const gone = new Map<string, CodeReferenceRow[]>();
      for (const row of previous) {
        if (reported.has(row.slug)) continue;
        const list = gone.get(row.slug) ?? [];
        list.push({ filePath: row.file_path, lineNumber: row.line_number, lineContent: row.line_content });
        gone.set(row.slug, list);
      }
      removedSlugs = [...gone.keys()];
      await inScope().execute();
      await this.forgetRemovals(trx, projectId, upload, [...removedSlugs, ...slugs]);
      const removals = [...gone].map(([slug, refs]) => ({
        id: newId(),
        project_id: projectId,
        project_name: upload.projectName,
        branch: upload.branch,
        slug,
        removed_at: updatedAt,
        reference_count: refs.length,
        last_references: JSON.stringify(refs.slice(0, LAST_REFERENCES)),
      }));
      for (let i = 0; i < removals.length; i += CHUNK)
        await trx
          .insertInto('code_ref_removals')
          .values(removals.slice(i, i + CHUNK))
          .execute();
    } else {
      for (let i = 0; i < slugs.length; i += CHUNK)
        await inScope()
          .where('slug', 'in', slugs.slice(i, i + CHUNK))
          .execute();
      await this.forgetRemovals(trx, projectId, upload, slugs);
    }
    const rows = Object.entries(upload.references).flatMap(([slug, refs]) =>
      refs.map((ref) => ({
        id: newId(),
        project_id: projectId,
        project_name: upload.projectName,
        branch: upload.branch,
        repository_url: upload.repositoryUrl ?? null,
        slug,
        file_path: ref.filePath,
        line_number: ref.lineNumber,
        line_content: ref.lineContent,
        updated_at: updatedAt,
      })),
    );
    for (let i = 0; i < rows.length; i += CHUNK)
      await trx
        .insertInto('code_refs')
        .values(rows.slice(i, i + CHUNK))
        .execute();
    return { removedSlugs };
  }

  /** Slugs reported (again) in a scope are no longer "removed from code" there. */
  private async forgetRemovals(trx: Executor, projectId: string, upload: CodeReferenceUpload, slugs: string[]): Promise<void> {
    for (let i = 0; i < slugs.length; i += CHUNK)
      await trx
        .deleteFrom('code_ref_removals')
        .where('project_id', '=', projectId)
        .where('project_name', '=', upload.projectName)
        .where('branch', '=', upload.branch)
        .where('slug', 'in', slugs.slice(i, i + CHUNK))
        .execute();
  }

  /** Deletes a branch's references and removal records (the branch was deleted in git). */
  async deleteBranch(trx: Executor, projectId: string, branch: string, projectName?: string): Promise<number> {
    let refs = trx.deleteFrom('code_refs').where('project_id', '=', projectId).where('branch', '=', branch);
    let removals = trx.deleteFrom('code_ref_removals').where('project_id', '=', projectId).where('branch', '=', branch);
    if (projectName !== undefined) {
      refs = refs.where('project_name', '=', projectName);
      removals = removals.where('project_name', '=', projectName);
    }
    const result = await refs.executeTakeFirst();
    await removals.execute();
    return Number(result.numDeletedRows);
  }

  async listRemovals(db: Executor, projectId: string, filter: CodeReferenceFilter): Promise<CodeReferenceRemoval[]> {
    let query = db.selectFrom('code_ref_removals').selectAll().where('project_id', '=', projectId);
    if (filter.slug) query = query.where('slug', '=', filter.slug);
    if (filter.branch) query = query.where('branch', '=', filter.branch);
    if (filter.projectName) query = query.where('project_name', '=', filter.projectName);
    const rows = await query.orderBy('removed_at', 'desc').orderBy('slug').orderBy('project_name').orderBy('branch').execute();
    return rows.map((r) => ({
      slug: r.slug,
      projectName: r.project_name,
      branch: r.branch,
      removedAt: r.removed_at,
      referenceCount: r.reference_count,
      lastReferences: JSON.parse(r.last_references) as CodeReferenceRow[],
    }));
  }

  /** Whether the project ever received an upload that still shows (references or removal records). */
  async hasAny(db: Executor, projectId: string): Promise<boolean> {
    const ref = await db.selectFrom('code_refs').select('id').where('project_id', '=', projectId).limit(1).executeTakeFirst();
    if (ref) return true;
    const removal = await db.selectFrom('code_ref_removals').select('id').where('project_id', '=', projectId).limit(1).executeTakeFirst();
    return removal !== undefined;
  }

  async list(db: Executor, projectId: string, filter: CodeReferenceFilter): Promise<StoredCodeReference[]> {
    let query = db.selectFrom('code_refs').selectAll().where('project_id', '=', projectId);
    if (filter.slug) query = query.where('slug', '=', filter.slug);
    if (filter.branch) query = query.where('branch', '=', filter.branch);
    if (filter.projectName) query = query.where('project_name', '=', filter.projectName);
    const rows = await query.orderBy('project_name').orderBy('branch').orderBy('slug').orderBy('file_path').orderBy('line_number').orderBy('id').execute();
    return rows.map((r) => ({
      slug: r.slug,
      projectName: r.project_name,
      branch: r.branch,
      repositoryUrl: r.repository_url,
      filePath: r.file_path,
      lineNumber: r.line_number,
      lineContent: r.line_content,
      updatedAt: r.updated_at,
    }));
  }
}
