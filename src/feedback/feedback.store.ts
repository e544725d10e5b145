import type { Selectable } from 'kysely';
import { fromJson, toJson } from '../db/codec.ts';
import type { Executor } from '../db/database.ts';
import { type Cursor, newestFirst } from '../db/paging.ts';
import { type Feedback, type FeedbackSummary, type Mood, MOODS } from './feedback.ts';
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
  async insert(db: Executor, f: Feedback): Promise<void> {
    await db
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

  /** Up to `limit + 1` entries, newest first, strictly after `after` (see db/paging.ts). */
  async list(db: Executor, environmentId: string, slug: string, limit: number, after: Cursor | undefined): Promise<Feedback[]> {
    const query = db.selectFrom('feedback').selectAll().where('environment_id', '=', environmentId).where('flag_slug', '=', slug);
    const rows = await newestFirst(query, limit, after).execute();
    return rows.map(toFeedback);
  }

  /** How many entries, their average rating and the count per mood, over all of a flag's feedback in one environment. */
  async summary(db: Executor, environmentId: string, slug: string): Promise<FeedbackSummary> {
    const rows = await db
      .selectFrom('feedback')
      .select((eb) => ['mood', eb.fn.countAll<string | number>().as('n'), eb.fn.sum<string | number>('rating').as('ratings')])
      .where('environment_id', '=', environmentId)
      .where('flag_slug', '=', slug)
      .groupBy('mood')
      .execute();
    const moods = Object.fromEntries(MOODS.map((mood) => [mood, 0])) as Record<Mood, number>;
    let total = 0;
    let ratings = 0;
    for (const row of rows) {
      moods[row.mood as Mood] = Number(row.n);
      total += Number(row.n);
      ratings += Number(row.ratings);
    }
    return { total, averageRating: total === 0 ? null : Math.round((ratings / total) * 100) / 100, moods };
  }

  async deleteForSlug(db: Executor, projectId: string, slug: string): Promise<void> {
    await db.deleteFrom('feedback').where('project_id', '=', projectId).where('flag_slug', '=', slug).execute();
  }

  async renameSlug(db: Executor, projectId: string, from: string, to: string): Promise<void> {
    await db.updateTable('feedback').set({ flag_slug: to }).where('project_id', '=', projectId).where('flag_slug', '=', from).execute();
  }
}
