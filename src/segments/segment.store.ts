import { type Selectable, sql } from 'kysely';
import { isUniqueViolation } from '../db/codec.ts';
import type { Executor } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import type { Segment } from '../targeting/targeting.ts';
import type { StoredSegment } from './segment.ts';
import type { SegmentsTable } from './segment.table.ts';

const toSegment = (row: Selectable<SegmentsTable>): StoredSegment => ({
  id: row.id,
  projectId: row.project_id,
  key: row.key,
  name: row.name,
  description: row.description,
  match: row.match === 'any' ? 'any' : 'all',
  conditions: JSON.parse(row.conditions) as Segment['conditions'],
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  version: row.version,
});

const toRow = (s: StoredSegment): Selectable<SegmentsTable> => ({
  id: s.id,
  project_id: s.projectId,
  key: s.key,
  name: s.name,
  description: s.description,
  match: s.match,
  conditions: JSON.stringify(s.conditions),
  created_at: s.createdAt,
  updated_at: s.updatedAt,
  version: s.version,
});

export class SegmentStore {
  /** Inserts a segment; a key already in the project is a conflict. */
  async insertSegment(db: Executor, segment: StoredSegment, projectKey: string): Promise<void> {
    try {
      await db.insertInto('segments').values(toRow(segment)).execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('conflict', message('segmentExists', { segmentKey: segment.key, projectKey }));
      throw error;
    }
  }

  /** Writes a segment and increments its version; with `expectedVersion`, only while still at it (false otherwise). */
  async updateSegment(db: Executor, segment: StoredSegment, expectedVersion?: number): Promise<boolean> {
    const { id, project_id, key, created_at, version, ...changes } = toRow(segment);
    let query = db
      .updateTable('segments')
      .set({ ...changes, version: sql<number>`version + 1` })
      .where('id', '=', id);
    if (expectedVersion !== undefined) query = query.where('version', '=', expectedVersion);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async findSegment(db: Executor, projectId: string, key: string): Promise<StoredSegment | undefined> {
    const row = await db.selectFrom('segments').selectAll().where('project_id', '=', projectId).where('key', '=', key).executeTakeFirst();
    return row ? toSegment(row) : undefined;
  }

  /** Every segment of a project, by key. */
  async listProjectSegments(db: Executor, projectId: string): Promise<StoredSegment[]> {
    const rows = await db.selectFrom('segments').selectAll().where('project_id', '=', projectId).orderBy('key').execute();
    return rows.map(toSegment);
  }

  async deleteSegment(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('segments').where('id', '=', id).execute();
  }
}
