import type { Logger } from 'pino';
import { AdminTokenService, instanceSecret, SettingsStore } from './admin/index.ts';
import { ApiKeyService, ApiKeyStore } from './api-keys/index.ts';
import { AccountService, AccountStore, PasswordWork, type ScryptCost, SignInService, SignInThrottles, ThrottleStore } from './accounts/index.ts';
import { AuditLog, AuditStore } from './audit/index.ts';
import { CodeRefService, CodeRefStore } from './code-refs/index.ts';
import type { Config } from './config.ts';
import type { DbHandle } from './db/connect.ts';
import { DomainEvents } from './events/index.ts';
import { FeedbackService, FeedbackStore } from './feedback/index.ts';
import { FlagdSyncServer, FlagdSyncService, FlagdSyncStore } from './flagd-sync/index.ts';
import {
  type FlagChanges,
  FlagdService,
  type FlagReadModel,
  FlagService,
  PlaygroundService,
  FlagStore,
  type OfrepStreams,
  openFlagReadPath,
  type StreamTokens,
} from './flags/index.ts';
import { FormService, FormStore } from './forms/index.ts';
import { createLogger } from './logger.ts';
import { type Lookup, MailSender, OutboxService, OutboxStore, OutboxWorker, WebhookSender, WebhookTargetRule } from './outbox/index.ts';
import { ProjectService, ProjectStore } from './projects/index.ts';
import { SegmentService, SegmentStore } from './segments/index.ts';
import { SessionService, SessionStore } from './sessions/index.ts';
import { CaptchaVerifier, RetentionJob, SubmissionService, SubmissionStore } from './submissions/index.ts';

/** What the process takes from outside that tests may replace. */
export interface Ports {
  clock: () => Date;
  log: Logger;
  /** Name resolution of webhook targets (tests stub it so that no name is resolved on the network). */
  lookup: Lookup;
  /** scrypt's cost for new password hashes; the production default unless a test makes it cheap. */
  scryptCost: ScryptCost;
}

export interface Services {
  readonly config: Config;
  readonly handle: DbHandle;
  /** The process's logger; the HTTP server logs through it too. */
  readonly log: Logger;
  readonly events: DomainEvents;
  readonly adminTokens: AdminTokenService;
  /** Dashboard sign-in sessions. */
  readonly sessions: SessionService;
  /** The admin token created on this start (printed once by main), if one was. */
  readonly createdAdminToken: string | undefined;
  readonly projects: ProjectService;
  readonly flags: FlagService;
  /** Reusable groups of conditions for rules, per project (issue 18). */
  readonly segments: SegmentService;
  /** flagd import and export of an environment (issue 18). */
  readonly flagd: FlagdService;
  /** Evaluates flags for a typed context, with why (issue 18). */
  readonly playground: PlaygroundService;
  /** Sync tokens of flagd in-process providers (issue 21). */
  readonly flagdSync: FlagdSyncService;
  /** flagd's sync gRPC service; `main` starts it on FLAGPOST_FLAGD_SYNC_PORT (off unless set). */
  readonly flagdSyncServer: FlagdSyncServer;
  readonly reads: FlagReadModel;
  readonly changes: FlagChanges;
  /** OFREP event streams of this instance, and the tokens of their URLs. */
  readonly streams: OfrepStreams;
  readonly streamTokens: StreamTokens;
  readonly apiKeys: ApiKeyService;
  readonly feedback: FeedbackService;
  readonly codeRefs: CodeRefService;
  /** Members, invitations, personal access tokens (issue 13). */
  readonly accounts: AccountService;
  /** Attempt counters per account and per client key, shared by every instance. */
  readonly signInThrottles: SignInThrottles;
  /** Password checks under the throttles, and the audit entries of sign-ins. */
  readonly signIns: SignInService;
  /** Bounds the scrypt work of this process. */
  readonly passwordWork: PasswordWork;
  /** The audit log of admin writes (issue 13). */
  readonly audit: AuditLog;
  readonly forms: FormService;
  readonly submissions: SubmissionService;
  /** Signs the links to the built-in result pages of forms. */
  readonly resultPageKey: Buffer;
  /** Delivers webhooks and e-mails of the outbox (contract D18); `runOnce()` delivers what is due now. */
  readonly outbox: OutboxWorker;
  /** Deletes submissions past their form's retention, and delivered files where asked; `runOnce()` runs a round now. */
  readonly retention: RetentionJob;
  /** True when the database answers. */
  healthy(): Promise<boolean>;
  /** Log lines dropped so far because stdout did not keep up. */
  droppedLogLines(): number;
  /** Waits for the log lines written so far to leave the process, at most `deadlineMs` (see createLogger). */
  flushLogs(deadlineMs: number): Promise<void>;
  /** Stops background work; the database handle is closed by its owner. */
  stop(): Promise<void>;
}

/** An invitation link is valid for a week. */
const INVITATION_TTL_MS = 7 * 86_400_000;
/** Wrong passwords for one e-mail address before it is refused for the rest of the window (every instance together). */
const SIGN_IN_MAX_FAILURES = 5;
const SIGN_IN_WINDOW_MS = 15 * 60_000;
/** Failed sign-ins the audit log takes per minute and instance; the rest are counted in the next entry. */
const FAILED_SIGN_INS_AUDITED_PER_MINUTE = 60;

/**
 * The one place that wires stores, services and ports; used by main and the tests. Capabilities
 * coordinate through `events` (docs/adr/0009-domain-events.md): each subscribes itself when built.
 */
export async function compose(config: Config, handle: DbHandle, ports: Partial<Ports> = {}): Promise<Services> {
  const clock = ports.clock ?? (() => new Date());
  const logger = ports.log ? { log: ports.log, dropped: () => 0, flush: async () => {} } : createLogger(config.logLevel);
  const { log } = logger;
  const { db } = handle;
  const events = new DomainEvents(log);

  const audit = new AuditLog({ db, store: new AuditStore(), clock, retentionDays: config.auditRetentionDays });
  const projects = new ProjectService({ db, store: new ProjectStore(), events, audit, clock });
  const flagStore = new FlagStore();
  const segmentStore = new SegmentStore();
  const segments = new SegmentService({ db, store: segmentStore, projects, events, audit, clock });
  const flags = new FlagService({ db, store: flagStore, projects, segments, events, audit, clock });
  const flagd = new FlagdService({ db, store: flagStore, projects, segments, events, audit, clock });
  const playground = new PlaygroundService({ db, store: flagStore, projects, segments });
  const settings = new SettingsStore();
  const { reads, changes, streams, streamTokens } = await openFlagReadPath({
    db,
    dialect: handle.dialect,
    databaseUrl: handle.databaseUrl,
    projects,
    store: flagStore,
    segments: segmentStore,
    events,
    log,
    streamKey: await instanceSecret(db, settings, 'ofrep_stream_key'),
    streamLimits: config.streams,
  });
  const flagdSync = new FlagdSyncService({ db, store: new FlagdSyncStore(), projects, flagd, audit, clock });
  // Hears the same changes as the read model: this instance's writes and, on PostgreSQL, the others'.
  const flagdSyncServer = new FlagdSyncServer({ service: flagdSync, watch: (watcher) => reads.watch(watcher), log, perClient: config.streams.perClient });
  const apiKeys = new ApiKeyService({ db, store: new ApiKeyStore(), projects, audit, clock });
  const feedback = new FeedbackService({ db, store: new FeedbackStore(), projects, flags, events, clock });
  const codeRefs = new CodeRefService({ db, store: new CodeRefStore(handle.dialect), projects, flags, audit, clock });
  const { service: adminTokens, created } = await AdminTokenService.open(db, settings, config.adminToken);
  const resultPageKey = await instanceSecret(db, settings, 'result_page_key');
  const sessions = new SessionService({ db, store: new SessionStore(), clock, ttlMs: config.sessionTtlMs });
  const accountStore = new AccountStore(handle.dialect);
  const accounts = new AccountService({
    db,
    store: accountStore,
    settings,
    audit,
    clock,
    invitationTtlMs: INVITATION_TTL_MS,
    scryptCost: ports.scryptCost,
  });
  const signInThrottles = new SignInThrottles({
    db,
    store: new ThrottleStore(),
    clock,
    account: { limit: SIGN_IN_MAX_FAILURES, windowMs: SIGN_IN_WINDOW_MS },
    address: { limit: config.adminLockout.maxFailures, windowMs: config.adminLockout.windowMs },
  });
  const signIns = new SignInService({
    db,
    store: accountStore,
    throttles: signInThrottles,
    audit,
    clock,
    failedPerMinute: FAILED_SIGN_INS_AUDITED_PER_MINUTE,
    scryptCost: ports.scryptCost,
  });
  const passwordWork = new PasswordWork(config.passwordWork);

  const forms = new FormService({ db, store: new FormStore(), audit, clock, webhookTargets: new WebhookTargetRule(config.outbox.webhookTargets) });
  const outboxStore = new OutboxStore(handle.dialect);
  const submissionStore = new SubmissionStore();
  const submissions = new SubmissionService({
    db,
    store: submissionStore,
    forms,
    outbox: new OutboxService(db, outboxStore),
    events,
    mailEnabled: config.smtpUrl !== undefined,
    listPageBytes: config.forms.listPageBytes,
    publicUrl: config.publicUrl,
    clock,
    captcha: new CaptchaVerifier(config.captcha, log),
    audit,
  });
  const outbox = new OutboxWorker({
    db,
    store: outboxStore,
    webhooks: new WebhookSender({ timeoutMs: config.outbox.webhookTimeoutMs, policy: config.outbox.webhookTargets, clock, lookup: ports.lookup }),
    mail: config.smtpUrl ? new MailSender(config.smtpUrl, config.mailFrom) : undefined,
    forms,
    events,
    log,
    pollMs: config.outbox.pollMs,
    retryBaseMs: config.outbox.retryBaseMs,
    maxAttempts: config.outbox.maxAttempts,
    leaseMs: config.outbox.webhookTimeoutMs + 60_000,
    clock,
  });
  outbox.start();
  const retention = new RetentionJob({
    db,
    dialect: handle.dialect,
    store: submissionStore,
    forms,
    clock,
    log,
    intervalMs: config.retentionIntervalMs,
    alsoPrune: [() => audit.prune(), () => signInThrottles.prune()],
  });
  retention.start();

  return {
    config,
    handle,
    log,
    events,
    adminTokens,
    sessions,
    createdAdminToken: created,
    projects,
    flags,
    segments,
    flagd,
    playground,
    flagdSync,
    flagdSyncServer,
    reads,
    changes,
    streams,
    streamTokens,
    apiKeys,
    feedback,
    codeRefs,
    audit,
    accounts,
    signInThrottles,
    signIns,
    passwordWork,
    forms,
    submissions,
    resultPageKey,
    outbox,
    retention,
    healthy: () => handle.healthy(),
    droppedLogLines: logger.dropped,
    flushLogs: logger.flush,
    async stop() {
      streams.closeAll();
      await flagdSyncServer.close();
      await retention.stop();
      await changes.stop();
      await outbox.stop();
    },
  };
}
