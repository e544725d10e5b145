import type { Clock } from '../clock.ts';
import { AppError, message } from '../errors.ts';
import type { Db } from '../db/database.ts';
import type { ProjectService } from '../projects/index.ts';
import { engineSegment, type SegmentService } from '../segments/index.ts';
import { compileEnvironment, type Evaluation, type Explanation, explain, hasTargeting } from '../targeting/index.ts';
import { targetedFlag } from './flag.ts';
import type { FlagStore } from './flag.store.ts';

export interface PlaygroundDeps {
  db: Db;
  store: FlagStore;
  projects: ProjectService;
  segments: SegmentService;
  /** The clock port, for conditions that compare with now (as the read path evaluates them). */
  clock: Clock;
}

/** One flag's answer for the context, and why (null for a flag without targeting: its answer is fixed). */
export interface PlaygroundResult extends Evaluation {
  explanation: Omit<Explanation, 'evaluation'> | null;
}

/**
 * Explanations per request when every flag is evaluated: each compiles the environment again (the
 * engine's explain), so a large environment explains only its first targeted flags (by slug) and
 * answers the rest without `explanation`; asking for one flag always explains it.
 */
export const MAX_EXPLAINED = 50;

/**
 * The playground (issue 18): an environment's flags evaluated for a context typed in the dashboard,
 * with the engine's explanation. It loads what the read model loads (the environment's flags, the
 * project's segments), turns flags into the engine's input with the same `targetedFlag`, and evaluates
 * with the same `compileEnvironment`, so it answers what OFREP answers for that context.
 */
export class PlaygroundService {
  constructor(private readonly deps: PlaygroundDeps) {}

  /** One flag (`slug`) or every flag of the environment, by slug, evaluated for `context`. */
  async evaluate(projectKey: string, environmentKey: string, context: Record<string, unknown>, slug?: string): Promise<PlaygroundResult[]> {
    const { project, environment } = await this.deps.projects.getEnvironment(projectKey, environmentKey);
    const stored = await this.deps.store.listEnvironmentFlags(this.deps.db, environment.id);
    const segments = (await this.deps.segments.projectSegments(this.deps.db, project.id)).map(engineSegment);
    const flags = stored.map(targetedFlag).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const wanted = slug === undefined ? flags : flags.filter((f) => f.key === slug);
    if (slug !== undefined && wanted.length === 0) throw new AppError('not_found', message('adminFlagNotFound', { slug, projectKey }));
    const compiled = compileEnvironment(flags, segments, { now: () => this.deps.clock().getTime() });
    let explained = 0;
    return wanted.map((flag) => {
      const evaluation = compiled.evaluate(flag.key, context)!;
      if (!hasTargeting(flag.targeting) || (slug === undefined && explained >= MAX_EXPLAINED)) return { ...evaluation, explanation: null };
      explained++;
      const found = explain(flags, segments, flag.key, context);
      if (!found) return { ...evaluation, explanation: null };
      const { evaluation: _same, ...explanation } = found;
      return { ...evaluation, explanation };
    });
  }
}
