import type { Logger } from 'pino';
import { instanceSecret, SettingsStore } from './admin/index.ts';
import { ApiKeyService, ApiKeyStore } from './api-keys/index.ts';
import { AuditLog, AuditStore } from './audit/index.ts';
import {
  ChangeApplier,
  ChangeNotifier,
  ChangeRequestService,
  ChangeRequestViews,
  ChangeReviewService,
  ChangeScheduler,
  ChangeStore,
  PromotionService,
} from './changes/index.ts';
import { CodeRefService, CodeRefStore } from './code-refs/index.ts';
import type { WorkerLink } from './cluster/worker-link.ts';
import type { Config } from './config.ts';
import type { DbHandle } from './db/connect.ts';
import { DomainEvents } from './events/index.ts';
import { Readiness } from './http/health.ts';
import { EventService, EventStore, EventWriter, ExperimentService, ExperimentStore, MetricService, MetricStore } from './experiments/index.ts';
import { ExperimentGuardrailData, PrometheusClient, ReleaseGuard, ReleaseService, ReleaseStore, ReleaseTemplateService } from './releases/index.ts';
import { FeedbackService, FeedbackStore } from './feedback/index.ts';
import { FlagdService, ProjectDocumentService, UnleashImportService } from './documents/index.ts';
import { type FlagChanges, type FlagReadModel, FlagUsage, FlagUsageStore, type OfrepStreams, openFlagReadPath, type StreamTokens } from './evaluation/index.ts';
import { FlagdSyncServer, FlagdSyncService, FlagdSyncStore } from './flagd-sync/index.ts';
import { FlagService, FlagStore, PlaygroundService } from './flags/index.ts';
import { FileObjectStore, FileStorage, type FileStorageLog, FsObjectStore, type ObjectStore, S3ObjectStore } from './files/index.ts';
import { FormService, FormStore } from './forms/index.ts';
import {
  openAccounts,
  AccountStore,
  AdminGate,
  AdminTokenService,
  type Identity,
  PasswordWork,
  ProjectRoleService,
  ProjectRoleStore,
  type ScryptCost,
  SessionService,
  SessionStore,
  SignInService,
  SignInThrottles,
  SsoService,
  SsoStore,
  ThrottleStore,
} from './identity/index.ts';
import { sessionCookieOf } from './http/session-cookie.ts';
import { createLogger } from './logger.ts';
import { Metrics } from './metrics/metrics.ts';
import { startTracing, type Tracing } from './tracing/tracing.ts';
import { allDeliveries, type Lookup, MailSender, type OutboxSettings, Scheduler, WebhookSender, WebhookTargetRule } from './delivery/index.ts';
import { WebhookService, WebhookStore, WebhookWorker } from './webhooks/index.ts';
import { ProjectService, ProjectStore } from './projects/index.ts';
import { SegmentService, SegmentStore } from './segments/index.ts';
import { CaptchaVerifier, OutboxService, OutboxStore, OutboxWorker, RetentionJob, SubmissionService, SubmissionStore } from './submissions/index.ts';

/** What the process takes from outside that tests may replace. */
export interface Ports {
  clock: () => Date;
  log: Logger;
  /** Name resolution of webhook targets (tests stub it so that no name is resolved on the network). */
  lookup: Lookup;
  /** scrypt's cost for new password hashes; the production default unless a test makes it cheap. */
  scryptCost: ScryptCost;
  /** This process's link to the primary when it is one of FLAGPOST_WORKERS > 1 workers; undefined for one process. */
  worker: WorkerLink | undefined;
}

export interface Services {
  readonly config: Config;
  readonly handle: DbHandle;
  /** The process's logger; the HTTP server logs through it too. */
  readonly log: Logger;
  /** The link to the primary of FLAGPOST_WORKERS > 1 (rate limit counters, changes to the other workers). */
  readonly worker: WorkerLink | undefined;
  readonly events: DomainEvents;
  /** Who may act, and how they prove it: admin token, members, sessions, throttles, the admin gate. */
  readonly identity: Identity;
  /** The admin token created on this start (printed once by main), if one was. */
  readonly createdAdminToken: string | undefined;
  readonly projects: ProjectService;
  readonly flags: FlagService;
  /** Reusable groups of conditions for rules, per project (issue 18). */
  readonly segments: SegmentService;
  /** flagd import and export of an environment (issue 18). */
  readonly flagd: FlagdService;
  /** Flags as code: a project exported as one document, and documents applied (issue 21). */
  readonly documents: ProjectDocumentService;
  /** Migration from Unleash exports (issue 21). */
  readonly unleash: UnleashImportService;
  /** Evaluates flags for a typed context, with why (issue 18). */
  readonly playground: PlaygroundService;
  /** Sync tokens of flagd in-process providers (issue 21). */
  readonly flagdSync: FlagdSyncService;
  /** flagd's sync gRPC service; `main` starts it on FLAGPOST_FLAGD_SYNC_PORT (off unless set). */
  readonly flagdSyncServer: FlagdSyncServer;
  readonly reads: FlagReadModel;
  /** Traces over OTLP when an OTEL_EXPORTER_OTLP_* endpoint is set; undefined (nothing loaded) otherwise. */
  readonly tracing: Tracing | undefined;
  /** Prometheus metrics of this process when FLAGPOST_METRICS_PORT is set; `main` serves them on that port. */
  readonly metrics: Metrics | undefined;
  /** Flag usage: flushes the read path's counts in hourly batches, answers usage questions (issue 23). */
  readonly usage: FlagUsage;
  readonly changes: FlagChanges;
  /** OFREP event streams of this instance, and the tokens of their URLs. */
  readonly streams: OfrepStreams;
  readonly streamTokens: StreamTokens;
  readonly apiKeys: ApiKeyService;
  readonly feedback: FeedbackService;
  readonly codeRefs: CodeRefService;
  /** Experiments' events: POST /v1/track, their retention and personal data (issue 32). */
  readonly trackedEvents: EventService;
  /** Metrics of projects (issue 32). */
  readonly experimentMetrics: MetricService;
  /** Experiments of environments: drafts, start and stop (issue 32). */
  readonly experiments: ExperimentService;
  /** Release plans of flags (issue 33). */
  readonly releases: ReleaseService;
  readonly releaseTemplates: ReleaseTemplateService;
  /** The guard loop of releases; `runOnce()` checks every running release now and sends their e-mails. */
  readonly releaseGuard: ReleaseGuard;
  /** Change requests of flags and segments (issue 24). */
  readonly changeRequests: ChangeRequestService;
  readonly changeReviews: ChangeReviewService;
  readonly changeViews: ChangeRequestViews;
  /** Applies change requests, now or when they are due. */
  readonly changeApplier: ChangeApplier;
  /** Compare and promote between environments, revert from a flag's history. */
  readonly promotion: PromotionService;
  /** The periodic job of scheduled changes; `runOnce()` applies what is due now. */
  readonly changeScheduler: ChangeScheduler;
  /** The audit log of admin writes (issue 13). */
  readonly audit: AuditLog;
  readonly forms: FormService;
  readonly submissions: SubmissionService;
  /** Signs the links to the built-in result pages of forms. */
  readonly resultPageKey: Buffer;
  /** Delivers webhooks and e-mails of the outbox (contract D18); `runOnce()` delivers what is due now. */
  readonly outbox: OutboxWorker;
  /** Project webhooks on flag changes (issue 23). */
  readonly webhooks: WebhookService;
  /** Delivers project webhooks' events; `runOnce()` delivers what is due now. */
  readonly webhookWorker: WebhookWorker;
  /** Deletes submissions past their form's retention, and delivered files where asked; `runOnce()` runs a round now. */
  readonly retention: RetentionJob;
  /** Where uploaded files are (FLAGPOST_FILE_STORAGE) and the sweep of their objects. */
  readonly files: FileStorage;
  /** True when the database answers. */
  healthy(): Promise<boolean>;
  /** What /readyz answers; turned to draining on SIGTERM (src/shutdown.ts). */
  readonly readiness: Readiness;
  /** Log lines dropped so far because stdout did not keep up. */
  droppedLogLines(): number;
  /** Waits for the log lines written so far to leave the process, at most `deadlineMs` (see createLogger). */
  flushLogs(deadlineMs: number): Promise<void>;
  /** The periodic jobs of this process (scheduleJobs); `start()` starts them. */
  readonly scheduler: Scheduler;
  /**
   * Starts what runs in the background: the change feeds of the read path (LISTEN on PostgreSQL, the
   * other workers) and the periodic jobs. `main` calls it once the app is built; `compose()` starts
   * nothing, so a command-line tool composes the same services and starts none.
   */
  start(): Promise<void>;
  /** Stops background work (started or not); the database handle is closed by its owner. */
  stop(): Promise<void>;
}

/** The version traces name (package.json's; the bundle has no package.json beside it to read). */
const PACKAGE_VERSION = '0.1.0';
/** How often each instance looks for scheduled changes that are due (they apply within this of their time). */
const SCHEDULED_CHANGES_POLL_MS = 5_000;
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

  const audit = new AuditLog({ db, store: new AuditStore(), clock, retentionDays: config.auditRetentionDays, events });
  const projects = new ProjectService({ db, store: new ProjectStore(), events, audit, clock });
  const flagStore = new FlagStore();
  const segmentStore = new SegmentStore();
  const segments = new SegmentService({ db, store: segmentStore, projects, events, audit, clock });
  const settings = new SettingsStore();
  const streamKey = await instanceSecret(db, settings, 'ofrep_stream_key');
  const { reads, changes, streams, streamTokens } = openFlagReadPath({
    db,
    dialect: handle.dialect,
    databaseUrl: handle.databaseUrl,
    projects,
    store: flagStore,
    segments: segmentStore,
    events,
    log,
    streamKey,
    streamLimits: config.streams,
    peers: ports.worker,
  });
  const usage = new FlagUsage({
    db,
    store: new FlagUsageStore(),
    projects,
    flags: flagStore,
    tally: reads.usage,
    events,
    clock,
    flushMs: config.usage.flushMs,
    retentionDays: config.usage.retentionDays,
    log,
  });
  const flags = new FlagService({ db, store: flagStore, projects, segments, events, audit, clock, usage });
  const flagd = new FlagdService({ db, store: flagStore, projects, segments, events, audit, clock });
  const playground = new PlaygroundService({ db, store: flagStore, projects, segments });
  const flagdSync = new FlagdSyncService({ db, store: new FlagdSyncStore(), projects, flagd, audit, clock });
  // Hears the same changes as the read model: this instance's writes and, on PostgreSQL, the others'.
  const flagdSyncServer = new FlagdSyncServer({
    service: flagdSync,
    watch: (watcher) => reads.watch(watcher),
    log,
    perClient: config.streams.perClient,
    usage: reads.usage,
    connections: {
      max: config.flagdSync.maxConnections,
      perClient: config.flagdSync.maxConnectionsPerClient,
      idleMs: config.flagdSync.idleMs,
      maxAgeMs: config.flagdSync.maxAgeMs,
    },
  });
  const eventStore = new EventStore(handle.dialect);
  const eventWriter = new EventWriter(db, eventStore);
  // The read model answers the track route's port (ClientEnvironments): its warm snapshots know every flag's variants.
  const trackedEvents = new EventService({
    db,
    store: eventStore,
    writer: eventWriter,
    environments: reads,
    clock,
    retentionDays: config.events.retentionDays,
  });
  const experimentStore = new ExperimentStore();
  const metricStore = new MetricStore();
  const experimentMetrics = new MetricService({ db, store: metricStore, experiments: experimentStore, projects, audit, clock });
  const experiments = new ExperimentService({
    db,
    store: experimentStore,
    metrics: metricStore,
    events: eventStore,
    projects,
    flags,
    audit,
    clock,
  });
  const apiKeys = new ApiKeyService({ db, store: new ApiKeyStore(), projects, audit, clock });
  const feedback = new FeedbackService({ db, store: new FeedbackStore(), projects, flags, events, clock });
  const codeRefs = new CodeRefService({ db, store: new CodeRefStore(handle.dialect), projects, flags, usage, audit, clock });
  const { service: adminTokens, created } = await AdminTokenService.open(db, settings, config.adminToken);
  const resultPageKey = await instanceSecret(db, settings, 'result_page_key');
  const sessions = new SessionService({ db, store: new SessionStore(), clock, ttlMs: config.sessionTtlMs });
  const accountStore = new AccountStore(handle.dialect);
  const accounts = openAccounts({
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
    passwordsOff: config.sso?.only ? { breakGlassEmail: config.sso.breakGlassEmail } : undefined,
  });
  const passwordWork = new PasswordWork(config.passwordWork);
  const projectRoles = new ProjectRoleService({ db, store: new ProjectRoleStore(), accounts: accountStore, projects, audit, clock });
  const changeStore = new ChangeStore(handle.dialect);
  const changeMail = config.smtpUrl ? new MailSender(config.smtpUrl, config.mailFrom) : undefined;
  const changeNotifier = new ChangeNotifier({
    db,
    store: changeStore,
    mail: changeMail,
    accounts: accounts.members,
    projectRoles,
    publicUrl: config.publicUrl,
    clock,
    maxAttempts: config.outbox.maxAttempts,
    log,
  });
  const changeViews = new ChangeRequestViews({ db, store: changeStore, projects, flags, segments });
  const changeRequests = new ChangeRequestService({
    db,
    store: changeStore,
    projects,
    flags,
    segments,
    views: changeViews,
    audit,
    notifier: changeNotifier,
    clock,
    events,
  });
  const changeReviews = new ChangeReviewService({ db, store: changeStore, views: changeViews, audit, notifier: changeNotifier, clock, events });
  const changeApplier = new ChangeApplier({
    db,
    store: changeStore,
    projects,
    flags,
    segments,
    views: changeViews,
    events,
    audit,
    notifier: changeNotifier,
    clock,
  });
  const promotion = new PromotionService({ db, projects, flags, requests: changeRequests, views: changeViews, audit, events });
  // Flags as code opens (and keeps or updates) the change requests of protected environments through promotion (a port: flags/ does not import changes/).
  const documents = new ProjectDocumentService({ db, store: flagStore, projects, segments, events, audit, clock, protectedChanges: promotion });
  const unleash = new UnleashImportService({ documents });
  const changeScheduler = new ChangeScheduler({ applier: changeApplier, notifier: changeNotifier, log, pollMs: SCHEDULED_CHANGES_POLL_MS });

  const files = openFileStorage(config, handle, clock, log);
  const cookie = sessionCookieOf(config.publicUrl, config.sessionTtlMs);
  const forms = new FormService({
    db,
    store: new FormStore(),
    audit,
    clock,
    events,
    projects,
    webhookTargets: new WebhookTargetRule(config.outbox.webhookTargets),
  });
  const gate = new AdminGate({
    adminToken: adminTokens,
    sessions,
    accounts,
    throttles: signInThrottles,
    projectRoles,
    projects,
    forms,
    cookieName: cookie.name,
    publicOrigin: new URL(config.publicUrl).origin,
  });
  const sso =
    config.sso && new SsoService({ db, store: new SsoStore(), accounts: accountStore, audit, clock, config: config.sso, log, throttles: signInThrottles });
  const identity: Identity = {
    adminToken: adminTokens,
    accounts,
    sessions,
    throttles: signInThrottles,
    signIns,
    passwordWork,
    gate,
    cookie,
    sso,
    projectRoles,
  };

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
    files,
  });
  const webhookSender = new WebhookSender({ timeoutMs: config.outbox.webhookTimeoutMs, policy: config.outbox.webhookTargets, clock, lookup: ports.lookup });
  // The delivery settings of the outbox, which project webhooks' deliveries share (ADR 0040).
  const outboxSettings: OutboxSettings = {
    log,
    pollMs: config.outbox.pollMs,
    retryBaseMs: config.outbox.retryBaseMs,
    maxAttempts: config.outbox.maxAttempts,
    leaseMs: config.outbox.webhookTimeoutMs + 60_000,
    clock,
  };
  const outbox = new OutboxWorker({
    ...outboxSettings,
    db,
    store: outboxStore,
    webhooks: webhookSender,
    mail: config.smtpUrl ? new MailSender(config.smtpUrl, config.mailFrom) : undefined,
    forms,
    events,
  });
  const webhookStore = new WebhookStore(handle.dialect);
  const webhooks = new WebhookService({
    db,
    store: webhookStore,
    projects,
    audit,
    events,
    clock,
    webhookTargets: new WebhookTargetRule(config.outbox.webhookTargets),
  });
  const webhookWorker = new WebhookWorker({ ...outboxSettings, db, store: webhookStore, sender: webhookSender, events });
  const retention = new RetentionJob({
    db,
    dialect: handle.dialect,
    store: submissionStore,
    forms,
    files,
    clock,
    log,
    intervalMs: config.retentionIntervalMs,
    alsoPrune: [() => audit.prune(), () => signInThrottles.prune(), () => usage.prune(), () => trackedEvents.prune(), ...(sso ? [() => sso.prune()] : [])],
  });
  // Releases (issue 33): the guard runs in one process of each instance; its moves are conditional on each
  // release's version, so instances that run it at once still move each release once.
  const releaseStore = new ReleaseStore(handle.dialect);
  const guardrailData = new ExperimentGuardrailData(db, metricStore);
  const releases = new ReleaseService({
    db,
    store: releaseStore,
    projects,
    flags,
    events,
    audit,
    clock,
    data: guardrailData,
    targets: new WebhookTargetRule(config.outbox.webhookTargets),
    mail: changeMail,
    accounts: accounts.members,
    publicUrl: config.publicUrl,
  });
  const releaseTemplates = new ReleaseTemplateService({ db, store: releaseStore, projects, releases, audit, clock });
  const releaseGuard = new ReleaseGuard({
    db,
    store: releaseStore,
    projects,
    releases,
    data: guardrailData,
    prometheus: new PrometheusClient({ policy: config.outbox.webhookTargets, lookup: ports.lookup }),
    clock,
    mail: changeMail,
    maxAttempts: config.outbox.maxAttempts,
    log,
    pollMs: config.releases.checkMs,
  });
  const scheduler = new Scheduler(ports.worker?.runsJobs ?? true);
  scheduleJobs(scheduler, { changeScheduler, outbox, webhookWorker, retention, usage, releaseGuard });
  const metrics =
    config.metrics.port === undefined
      ? undefined
      : new Metrics({
          reads,
          streams,
          flagdSync: flagdSyncServer,
          // Every delivery queue: the submissions' outbox, project webhooks, change-request e-mails.
          outbox: allDeliveries([outbox, webhookWorker, changeNotifier.deliveries, releaseGuard.deliveries]),
          database: handle,
        });
  reads.observer = metrics;
  const tracing =
    config.tracing.otlpEndpoint !== undefined || config.tracing.otlpTracesEndpoint !== undefined
      ? await startTracing(config.tracing, PACKAGE_VERSION)
      : undefined;

  return {
    config,
    handle,
    log,
    worker: ports.worker,
    events,
    identity,
    createdAdminToken: created,
    projects,
    flags,
    segments,
    flagd,
    documents,
    unleash,
    playground,
    flagdSync,
    flagdSyncServer,
    reads,
    metrics,
    tracing,
    usage,
    changes,
    streams,
    streamTokens,
    apiKeys,
    feedback,
    codeRefs,
    trackedEvents,
    experimentMetrics,
    experiments,
    releases,
    releaseTemplates,
    releaseGuard,
    changeRequests,
    changeReviews,
    changeViews,
    changeApplier,
    promotion,
    changeScheduler,
    audit,
    forms,
    submissions,
    resultPageKey,
    outbox,
    webhooks,
    webhookWorker,
    retention,
    files,
    scheduler,
    healthy: () => handle.healthy(),
    readiness: new Readiness(() => handle.healthy()),
    droppedLogLines: logger.dropped,
    flushLogs: logger.flush,
    async start() {
      await changes.start();
      scheduler.start();
    },
    async stop() {
      streams.closeAll();
      await flagdSyncServer.close();
      // After the servers closed: every answered read is counted, and written (the usage job's last
      // flush) before the database closes.
      await scheduler.stop();
      changeMail?.close();
      await changes.stop();
      files.close();
      await tracing?.shutdown();
    },
  };
}

/**
 * Every periodic job of the process, in one place. Periodic jobs that must not run in every worker run
 * in one process of the instance: the only one, or the worker of slot 1; every worker still delivers what
 * its own submissions wake (a claimed delivery is leased to one process).
 */
function scheduleJobs(
  scheduler: Scheduler,
  jobs: {
    changeScheduler: ChangeScheduler;
    outbox: OutboxWorker;
    webhookWorker: WebhookWorker;
    retention: RetentionJob;
    usage: FlagUsage;
    releaseGuard: ReleaseGuard;
  },
): void {
  // Every instance looks for due changes; the claim in ChangeApplier.runDue makes each apply once.
  scheduler.add('scheduled changes', jobs.changeScheduler, 'every process');
  scheduler.add('outbox deliveries', jobs.outbox, 'one process');
  scheduler.add('project webhook deliveries', jobs.webhookWorker, 'one process');
  scheduler.add('retention', jobs.retention, 'one process');
  // Releases' moves are conditional on each release's version: instances running it at once move each once.
  scheduler.add('release guard', jobs.releaseGuard, 'one process');
  // Each process flushes the counts of the reads it answered.
  scheduler.add('flag usage flush', jobs.usage, 'every process');
}

/**
 * The file storage of FLAGPOST_FILE_STORAGE, able to read and delete objects of every store it can
 * reach: the folder always, the bucket whenever one is configured (files stay where they were written
 * until `migrate-files` moves them).
 */
function openFileStorage(config: Config, handle: DbHandle, clock: () => Date, log: FileStorageLog): FileStorage {
  const objects: { fs: ObjectStore; s3?: ObjectStore } = { fs: new FsObjectStore(config.dataDir) };
  if (config.files.s3) objects.s3 = new S3ObjectStore(config.files.s3);
  return new FileStorage({
    db: handle.db,
    store: new FileObjectStore(),
    kind: config.files.storage,
    objects,
    clock,
    log,
    // An upload holds its record at most its body's deadline, plus its wait in the group commit; a sweep
    // that gives up a slower one makes its commit fail (503), never a row without its object.
    abandonAfterMs: Math.max(config.files.sweepAgeMs, config.forms.uploadTimeoutMs),
  });
}
