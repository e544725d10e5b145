import { sql } from 'kysely';
import { AdminTokenService } from './admin/admin-token.service.ts';
import { ApiKeyService, ApiKeyStore } from './api-keys/index.ts';
import { CodeRefService, CodeRefStore } from './code-refs/index.ts';
import type { Config } from './config.ts';
import type { DbHandle } from './db/connect.ts';
import { FeedbackService, FeedbackStore } from './feedback/index.ts';
import { type FlagChange, type FlagChanges, FlagReadModel, FlagService, FlagStore } from './flags/index.ts';
import { PgFlagChanges } from './flags/pg-flag-changes.ts';
import { FormService, FormStore, SubmissionService, SubmissionStore } from './forms/index.ts';
import { MailSender, OutboxStore, OutboxWorker, WebhookSender } from './outbox/index.ts';
import { ProjectService, ProjectStore } from './projects/index.ts';

export interface Ports {
  clock: () => Date;
}

export interface Services {
  readonly config: Config;
  readonly handle: DbHandle;
  readonly adminTokens: AdminTokenService;
  readonly projects: ProjectService;
  readonly flags: FlagService;
  readonly reads: FlagReadModel;
  readonly changes: FlagChanges;
  readonly apiKeys: ApiKeyService;
  readonly feedback: FeedbackService;
  readonly codeRefs: CodeRefService;
  readonly forms: FormService;
  readonly submissions: SubmissionService;
  /** Delivers webhooks and e-mails of the outbox (contract D18); `runOnce()` delivers what is due now. */
  readonly outbox: OutboxWorker;
  /** True when the database answers. */
  healthy(): Promise<boolean>;
  /** Stops background work; the database handle is closed by its owner. */
  stop(): Promise<void>;
}

/** Applies changes to this instance's read model only (one instance, or SQLite). */
class LocalFlagChanges implements FlagChanges {
  constructor(private readonly reads: FlagReadModel) {}
  async publish(change: FlagChange): Promise<void> {
    this.reads.apply(change);
  }
}

/** The one place that wires stores, services and ports; used by main, the CLI and the tests. */
export async function compose(config: Config, handle: DbHandle, ports: Partial<Ports> = {}): Promise<Services & { createdAdminToken?: string }> {
  const clock = ports.clock ?? (() => new Date());
  const { db } = handle;
  const projectStore = new ProjectStore(db);
  const flagStore = new FlagStore(db);
  const feedbackStore = new FeedbackStore(db);

  const reads = new FlagReadModel({
    async loadEnvironment(projectKey, environmentKey) {
      const env = await projectStore.findEnvironmentByKeys(projectKey, environmentKey);
      if (!env) return undefined;
      return { environmentId: env.id, flags: await flagStore.listEnvironmentFlags(env.id) };
    },
  });
  // Several instances share PostgreSQL: changes also travel by LISTEN/NOTIFY to the others (issue 4).
  const pgChanges =
    handle.dialect === 'postgres' && handle.databaseUrl
      ? new PgFlagChanges({ db, databaseUrl: handle.databaseUrl, reads, onError: warnOf(config) })
      : undefined;
  await pgChanges?.start();
  const changes: FlagChanges = pgChanges ?? new LocalFlagChanges(reads);

  let flags: FlagService | undefined;
  const projects = new ProjectService({
    db,
    store: projectStore,
    changes,
    clock,
    onEnvironmentCreated: (trx, env) => flags!.copyFlagsToEnvironment(trx, env),
  });
  flags = new FlagService({
    db,
    store: flagStore,
    projects,
    changes,
    clock,
    onFlagDeleted: (trx, projectId, slug) => feedbackStore.deleteForSlug(trx, projectId, slug),
  });
  const apiKeys = new ApiKeyService(new ApiKeyStore(db), projects, clock);
  const feedback = new FeedbackService(feedbackStore, projects, flags, clock);
  const codeRefs = new CodeRefService(db, new CodeRefStore(db), projects, clock);
  const { service: adminTokens, created } = await AdminTokenService.open(db, config.adminToken);

  const forms = new FormService(new FormStore(db), clock);
  const outboxStore = new OutboxStore(db, handle.dialect);
  let outbox: OutboxWorker | undefined;
  const submissions = new SubmissionService({
    db,
    store: new SubmissionStore(db),
    forms,
    outbox: outboxStore,
    mailEnabled: config.smtpUrl !== undefined,
    publicUrl: config.publicUrl,
    onQueued: () => outbox!.wake(),
    clock,
  });
  outbox = new OutboxWorker({
    store: outboxStore,
    webhooks: new WebhookSender(config.outbox.webhookTimeoutMs, clock),
    mail: config.smtpUrl ? new MailSender(config.smtpUrl, config.mailFrom) : undefined,
    webhookSecretOf: (submissionId) => submissions.webhookSecretOf(submissionId),
    pollMs: config.outbox.pollMs,
    retryBaseMs: config.outbox.retryBaseMs,
    maxAttempts: config.outbox.maxAttempts,
    leaseMs: config.outbox.webhookTimeoutMs + 60_000,
    clock,
  });
  outbox.start();

  return {
    config,
    handle,
    adminTokens,
    createdAdminToken: created,
    projects,
    flags,
    reads,
    changes,
    apiKeys,
    feedback,
    codeRefs,
    forms,
    submissions,
    outbox,
    async healthy() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    async stop() {
      await pgChanges?.stop();
      await outbox.stop();
    },
  };
}

/** A warning line in the format of the app's logger, for background work that has no request. */
function warnOf(config: Config) {
  return (error: unknown, msg: string) => {
    if (config.logLevel === 'silent' || config.logLevel === 'error' || config.logLevel === 'fatal') return;
    const err = error instanceof Error ? error.message : String(error);
    process.stderr.write(`${JSON.stringify({ level: 40, time: Date.now(), msg, err })}\n`);
  };
}
