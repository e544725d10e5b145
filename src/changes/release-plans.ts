import type { Actor, FieldChange } from '../audit/index.ts';
import type { Executor } from '../db/database.ts';
import type { Emit } from '../events/index.ts';
import type { Environment, Project } from '../projects/index.ts';

/**
 * A release plan as a change request carries it (issue 33): the body of POST .../releases. What is
 * approved is the plan with its template's parts filled in; applying the request starts the release,
 * whose steps then run by themselves.
 */
export interface ReleasePlanInput {
  variant: string;
  baseline: string;
  steps?: Array<{ percent: number; holdSeconds?: number; approval?: boolean }>;
  guardrails?: Array<
    { metric: string; minUsers?: number } | { prometheus: { url: string; query: string; above?: number; below?: number; forSeconds?: number } }
  >;
  template?: string;
}

/** The port through which change requests propose and start releases, owned here and answered by releases/ (ReleaseService). */
export interface ReleasePlans {
  /**
   * The plan for `slug` with its template's parts filled in, checked (400 naming each problem under
   * `field`). Within `trx` when given; `checkMetrics` also reads the project's metrics (outside transactions).
   */
  resolvePlan(
    trx: Executor | undefined,
    target: { project: Project; environment: Environment },
    slug: string,
    plan: ReleasePlanInput,
    options: { checkMetrics: boolean; field?: string },
  ): Promise<ReleasePlanInput>;
  /** Starts the plan within the caller's transaction (409 while the flag has an active release). */
  startIn(
    trx: Executor,
    emit: Emit,
    target: { project: Project; environment: Environment },
    slug: string,
    plan: ReleasePlanInput,
    actor: Actor,
    options: { createdBy?: Actor; note?: Record<string, FieldChange> },
  ): Promise<unknown>;
}
