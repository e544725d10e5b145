import type { Logger } from 'pino';
import { AdminTokenService, instanceSecret, SettingsStore } from './admin/index.ts';
import { ApiKeyService, ApiKeyStore } from './api-keys/index.ts';
import { AccountService, AccountStore, type ScryptCost, SignInThrottle } from './accounts/index.ts';
import { AuditLog, AuditStore } from './audit/index.ts';
import { CodeRefService, CodeRefStore } from './code-refs/index.ts';
import type { Config } from './config.ts';
import type { DbHandle } from './db/connect.ts';
import { DomainEvents } from './events/index.ts';
import { FeedbackService, FeedbackStore } from './feedback/index.ts';
import { type FlagChanges, type FlagReadModel, FlagService, FlagStore, type OfrepStreams, openFlagReadPath, type StreamTokens } from './flags/index.ts';
import { FormService, FormStore } from './forms/index.ts';
import { createLogger } from './logger.ts';
import { type Lookup, MailSender, OutboxService, OutboxStore, OutboxWorker, WebhookSender } from './outbox/index.ts';
import { ProjectService, ProjectStore } from './projects/index.ts';
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
  /** Per-account sign-in throttling. */
  readonly signInThrottle: SignInThrottle;
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
/** Wrong passwords for one address before it is refused for the rest of the window (per instance). */
const SIGN_IN_MAX_FAILURES = 5;
const SIGN_IN_WINDOW_MS = 15 * 60_000;

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
  const flags = new FlagService({ db, store: flagStore, projects, events, audit, clock });
  const settings = new SettingsStore();
  const { reads, changes, streams, streamTokens } = await openFlagReadPath({
    db,
    dialect: handle.dialect,
    databaseUrl: handle.databaseUrl,
    projects,
    store: flagStore,
    events,
    log,
    streamKey: await instanceSecret(db, settings, 'ofrep_stream_key'),
    streamLimits: config.streams,
  });
  const apiKeys = new ApiKeyService({ db, store: new ApiKeyStore(), projects, audit, clock });
  const feedback = new FeedbackService({ db, store: new FeedbackStore(), projects, flags, events, clock });
  const codeRefs = new CodeRefService({ db, store: new CodeRefStore(handle.dialect), projects, flags, audit, clock });
  const { service: adminTokens, created } = await AdminTokenService.open(db, settings, config.adminToken);
  const resultPageKey = await instanceSecret(db, settings, 'result_page_key');
  const sessions = new SessionService({ db, store: new SessionStore(), clock, ttlMs: config.sessionTtlMs });
  const accounts = new AccountService({
    db,
    store: new AccountStore(handle.dialect),
    settings,
    audit,
    clock,
    invitationTtlMs: INVITATION_TTL_MS,
    scryptCost: ports.scryptCost,
  });
  const signInThrottle = new SignInThrottle(SIGN_IN_MAX_FAILURES, SIGN_IN_WINDOW_MS, () => clock().getTime());

  const forms = new FormService({ db, store: new FormStore(), audit, clock });
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
    alsoPrune: [() => audit.prune()],
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
    reads,
    changes,
    streams,
    streamTokens,
    apiKeys,
    feedback,
    codeRefs,
    audit,
    accounts,
    signInThrottle,
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
      await retention.stop();
      await changes.stop();
      await outbox.stop();
    },
  };
}
