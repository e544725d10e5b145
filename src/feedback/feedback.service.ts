import { newId, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { type Cursor, type Page, pageOf } from '../db/paging.ts';
import { AppError, message, messages } from '../errors.ts';
import type { DomainEvents } from '../events/index.ts';
import type { FlagService } from '../flags/index.ts';
import type { ProjectService } from '../projects/index.ts';
import type { Feedback, FeedbackInput, FeedbackSummary } from './feedback.ts';
import type { FeedbackStore } from './feedback.store.ts';

/** Largest `metadata` of one feedback, as JSON characters. */
export const METADATA_MAX_BYTES = 4096;

export interface FeedbackServiceDeps {
  db: Db;
  store: FeedbackStore;
  projects: ProjectService;
  flags: FlagService;
  /** A deleted flag's feedback goes with it (flag.deleted, in the deleting transaction). */
  events: DomainEvents;
  clock: () => Date;
}

export class FeedbackService {
  constructor(private readonly deps: FeedbackServiceDeps) {
    deps.events.onTransaction('flag.deleted', (event, trx) => deps.store.deleteForSlug(trx, event.projectId, event.slug));
    // A renamed flag keeps its feedback.
    deps.events.onTransaction('flag.renamed', (event, trx) => deps.store.renameSlug(trx, event.projectId, event.from, event.to));
  }

  /**
   * Stores feedback for a preview flag of the environment named by the client keys. Unknown keys, an
   * unknown slug and a flag that is not a preview all answer the preview-flag 404 (contract D5, D10).
   */
  async submit(projectKey: string, environmentKey: string, input: FeedbackInput): Promise<Feedback> {
    // Anyone with the public keys can send feedback: its free-form metadata is bounded (issue 8).
    if (input.metadata && JSON.stringify(input.metadata).length > METADATA_MAX_BYTES) {
      throw AppError.validation([{ field: 'body.metadata', reason: `must be at most ${METADATA_MAX_BYTES} characters as JSON` }], messages.generic);
    }
    const env = await this.deps.projects.findEnvironmentByKeys(projectKey, environmentKey);
    if (!env || !(await this.deps.flags.isPreviewFlag(env.id, input.flagKey))) {
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
      createdAt: nowIso(this.deps.clock),
    };
    await this.deps.store.insert(this.deps.db, feedback);
    return feedback;
  }

  /** A page of a flag's feedback in one environment, newest first. */
  async list(
    projectKey: string,
    environmentKey: string,
    slug: string,
    page: { after: Cursor | undefined; limit: number },
  ): Promise<Page<Feedback> & { summary: FeedbackSummary }> {
    const { environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    if (!(await this.deps.flags.hasFlag(environment.id, slug))) {
      throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
    }
    const summary = await this.deps.store.summary(this.deps.db, environment.id, slug);
    return { ...pageOf(await this.deps.store.list(this.deps.db, environment.id, slug, page.limit, page.after), page.limit), summary };
  }
}
