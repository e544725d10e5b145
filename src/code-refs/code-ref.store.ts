import type { Executor } from '../db/database.ts';
import { newId } from '../db/codec.ts';
import type { CodeReferenceFilter, CodeReferenceUpload, StoredCodeReference } from './code-ref.ts';

/** Rows per INSERT, far below the bound-parameter limits of SQLite and PostgreSQL. */
const CHUNK = 500;

export class CodeRefStore {
  /**
   * Replaces, for each slug of the upload, the rows of that slug on (projectName, branch). Must run
   * inside the caller's transaction so that a failure changes nothing (contract D12).
   */
  async replace(trx: Executor, projectId: string, upload: CodeReferenceUpload, updatedAt: string): Promise<void> {
    const slugs = Object.keys(upload.references);
    for (let i = 0; i < slugs.length; i += CHUNK) {
      await trx
        .deleteFrom('code_refs')
        .where('project_id', '=', projectId)
        .where('project_name', '=', upload.projectName)
        .where('branch', '=', upload.branch)
        .where('slug', 'in', slugs.slice(i, i + CHUNK))
        .execute();
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
