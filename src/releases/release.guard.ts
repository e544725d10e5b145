import type { Db } from '../db/database.ts';
import type { OutageLog } from '../db/outage.ts';
import { type AttemptResult, DeliveryLoop, JobLoop, type MailSender } from '../delivery/index.ts';
import type { Environment, Project, ProjectService } from '../projects/index.ts';
import { type GuardrailData, type GuardrailView, type PrometheusClient, readMetricGuardrail, readPrometheusGuardrail } from './guardrail-readers.ts';
import { nextMove } from './release.ts';
import { RELEASE_GUARD, type ReleaseService, type Transition } from './release.service.ts';
import type { Release, ReleaseNotification, ReleaseStore } from './release.store.ts';

export interface ReleaseGuardDeps {
  db: Db;
  store: ReleaseStore;
  projects: Pick<ProjectService, 'listProjects'>;
  releases: Pick<ReleaseService, 'apply'>;
  data: GuardrailData;
  prometheus: Pick<PrometheusClient, 'query'>;
  clock: () => Date;
  mail: Pick<MailSender, 'send'> | undefined;
  maxAttempts: number;
  log: OutageLog;
  /** FLAGPOST_RELEASE_CHECK_MS; 0 turns the loop off (a test then calls runOnce). */
  pollMs: number;
}

/** An e-mail's lease while it is sent, and the wait before it is tried again. */
const MAIL_RETRY_MS = 60_000;
const MAILS_PER_ROUND = 20;

/**
 * The guard loop of releases (issue 33), a periodic job where periodic jobs run: each round reads the
 * guardrails of every running release, asks `nextMove` what to do at this wall-clock time, and carries the
 * move out through `ReleaseService.apply` (one transaction, conditional on the release's version), so
 * that with several instances or workers each step starts once and a rollback happens once; then it sends
 * the releases' e-mails. Holds count from the steps' stored `startedAt`: a restart resumes where it was.
 * `runOnce()` resolves with the number of moves this round made.
 */
export class ReleaseGuard extends JobLoop {
  /** The releases' e-mails (a rollback, to the creator): one claimed at a time, sent by these rounds. */
  readonly deliveries: DeliveryLoop<ReleaseNotification>;

  constructor(private readonly deps: ReleaseGuardDeps) {
    super({ name: 'release guard', log: deps.log, pollMs: deps.pollMs, firstRunMs: Math.min(deps.pollMs, 1000) });
    const { db, store } = deps;
    this.deliveries = new DeliveryLoop<ReleaseNotification>({
      name: 'release e-mail',
      log: deps.log,
      pollMs: 0,
      batch: 1,
      maxPerRun: MAILS_PER_ROUND,
      leaseMs: MAIL_RETRY_MS,
      maxAttempts: deps.maxAttempts,
      retryDelayMs: () => MAIL_RETRY_MS,
      clock: deps.clock,
      queue: {
        claimDue: (now, leaseUntil, limit) => store.claimDueNotifications(db, now, leaseUntil, limit),
        attempt: (mail) => this.send(mail),
        recordOutcome: (mail, outcome) => store.recordNotificationOutcome(db, mail.id, outcome),
        describe: (mail) => ({ releaseNotification: mail.id }),
        pendingStats: () => store.pendingNotificationStats(db),
      },
    });
  }

  protected async runDue(): Promise<number> {
    const running = await this.deps.store.listRunning(this.deps.db);
    let moves = 0;
    if (running.length > 0) {
      const places = new Map<string, { project: Project; environment: Environment }>();
      for (const project of await this.deps.projects.listProjects()) {
        for (const environment of project.environments) places.set(environment.id, { project, environment });
      }
      for (const release of running) {
        if (this.stopping) break;
        const place = places.get(release.environmentId);
        if (place && (await this.check(place.project, place.environment, release))) moves++;
      }
    }
    if (this.deps.mail) await this.deliveries.deliverDue();
    return moves;
  }

  /** One release's check: its readings, its move, both written at once if no one else moved it meanwhile. */
  private async check(project: Project, environment: Environment, release: Release): Promise<boolean> {
    const now = this.deps.clock();
    const readings = await Promise.all(release.guardrails.map((g, i) => this.read(release, g, i, now)));
    const names = release.guardrails.map((g) => ('prometheus' in g ? g.prometheus.query : g.metric));
    const move = nextMove(release, now, readings, names);
    const at = now.toISOString();
    const step = release.currentStep;
    const completed = release.progress.map((p, i) => (i === step ? { ...p, completedAt: at } : p));
    let t: Transition;
    switch (move.kind) {
      case 'none':
        t = { next: release, flag: undefined, action: '', changes: {} };
        break;
      case 'rollback':
        t = {
          next: { ...release, status: 'rolled_back', rolledBackReason: move.reason },
          flag: { kind: 'end', serve: release.baseline },
          action: 'release.rolled_back',
          changes: { status: { before: 'running', after: 'rolled_back' }, reason: { after: move.reason }, step: { after: step } },
          notifyCreator: true,
        };
        break;
      case 'wait_approval':
        t = {
          next: { ...release, status: 'waiting_approval', currentStep: move.step, progress: completed },
          flag: undefined,
          action: 'release.waiting_approval',
          changes: { step: { before: step, after: move.step } },
        };
        break;
      case 'start_step': {
        const progress = completed.map((p, i) => (i === move.step ? { ...p, startedAt: at } : p));
        const percent = release.steps[move.step]!.percent;
        t = {
          next: { ...release, currentStep: move.step, progress },
          flag: { kind: 'percent', percent },
          action: 'release.step_started',
          changes: { step: { before: step, after: move.step }, percent: { before: release.steps[step]!.percent, after: percent } },
        };
        break;
      }
      case 'complete':
        t = {
          next: { ...release, status: 'completed', progress: completed },
          flag: { kind: 'end', serve: release.variant },
          action: 'release.completed',
          changes: { status: { before: 'running', after: 'completed' } },
        };
        break;
    }
    const written = await this.deps.releases.apply(project, environment, release, t, RELEASE_GUARD, readings);
    return written !== undefined && move.kind !== 'none';
  }

  private async read(release: Release, guardrail: Release['guardrails'][number], index: number, now: Date): Promise<GuardrailView> {
    try {
      if ('prometheus' in guardrail) return await readPrometheusGuardrail(this.deps.prometheus, guardrail, release.readings[index], now);
      const startedAt = release.progress[0]?.startedAt ?? release.createdAt;
      return await readMetricGuardrail(this.deps.data, { ...release, startedAt }, guardrail, now);
    } catch (error) {
      return { state: 'unknown', reason: `could not be read: ${(error as Error).message}`, checkedAt: now.toISOString() };
    }
  }

  private async send(mail: ReleaseNotification): Promise<AttemptResult> {
    if (!this.deps.mail) return { ok: false, error: 'e-mail is off: SMTP_URL is not set' };
    return this.deps.mail.send({ to: mail.recipient, subject: mail.subject, text: mail.body });
  }
}
