import { newId, nowIso } from '../db/codec.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';
import { AppError, message } from '../errors.ts';
import type { FlagService } from '../flags/index.ts';
import type { ProjectService } from '../projects/index.ts';
import type { Feedback, FeedbackInput } from './feedback.ts';
import type { FeedbackStore } from './feedback.store.ts';

export class FeedbackService {
  constructor(
    private readonly store: FeedbackStore,
    private readonly projects: ProjectService,
    private readonly flags: FlagService,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /**
   * Stores feedback for a preview flag of the environment named by the client keys. Unknown keys, an
   * unknown slug and a flag that is not a preview all answer the preview-flag 404 (contract D5, D10).
   */
  async submit(projectKey: string, environmentKey: string, input: FeedbackInput): Promise<Feedback> {
    const env = await this.projects.findEnvironmentByKeys(projectKey, environmentKey);
    if (!env || !(await this.flags.isPreviewFlag(env.id, input.flagKey))) {
      throw new AppError('not_found', message('previewFlagNotFound', { flagKey: input.flagKey }));
    }
    const feedback: Feedback = {
      id: newId(),
      projectId: env.projectId,
      environmentId: env.id,
      flagKey: input.flagKey,
      mood: input.mood,
      rating: input.rating,
      description: input.description ?? null,
      metadata: input.metadata ?? null,
      createdAt: nowIso(this.clock),
    };
    await this.store.insert(feedback);
    return feedback;
  }

  /** A page of a flag's feedback in one environment, newest first. */
  async list(
    projectKey: string,
    environmentKey: string,
    slug: string,
    page: { cursor?: string; limit: number },
  ): Promise<{ feedback: Feedback[]; nextCursor: string | null }> {
    const after = decodeCursor(page.cursor);
    const { environment } = await this.projects.getEnvironment(projectKey, environmentKey);
    if (!(await this.flags.hasFlag(environment.id, slug))) {
      throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
    }
    const rows = await this.store.list(environment.id, slug, page.limit + 1, after);
    const feedback = rows.slice(0, page.limit);
    const last = feedback[feedback.length - 1];
    return { feedback, nextCursor: rows.length > page.limit && last ? encodeCursor(last) : null };
  }
}
