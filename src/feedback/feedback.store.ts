import type { Selectable } from 'kysely';
import { fromJson, toJson } from '../db/codec.ts';
import type { Cursor } from '../db/cursor.ts';
import type { Db } from '../db/database.ts';
import type { Feedback, Mood } from './feedback.ts';
import type { FeedbackTable } from './feedback.table.ts';

const toFeedback = (row: Selectable<FeedbackTable>): Feedback => ({
  id: row.id,
  projectId: row.project_id,
  environmentId: row.environment_id,
  flagKey: row.flag_slug,
  mood: row.mood as Mood,
  rating: row.rating,
  description: row.description,
  metadata: fromJson(row.metadata),
  createdAt: row.created_at,
});

export class FeedbackStore {
  constructor(private readonly db: Db) {}

  async insert(f: Feedback): Promise<void> {
    await this.db
      .insertInto('feedback')
      .values({
        id: f.id,
        project_id: f.projectId,
        environment_id: f.environmentId,
        flag_slug: f.flagKey,
        mood: f.mood,
        rating: f.rating,
        description: f.description,
        metadata: toJson(f.metadata),
        created_at: f.createdAt,
      })
      .execute();
  }

  /** One page, newest first, strictly after `after`. */
  async list(environmentId: string, slug: string, limit: number, after?: Cursor): Promise<Feedback[]> {
    let query = this.db
      .selectFrom('feedback')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('flag_slug', '=', slug);
    if (after) {
      query = query.where((eb) =>
        eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]),
      );
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toFeedback);
  }

  async deleteForSlug(db: Db, projectId: string, slug: string): Promise<void> {
    await db.deleteFrom('feedback').where('project_id', '=', projectId).where('flag_slug', '=', slug).execute();
  }
}
