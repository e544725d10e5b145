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
import { systemClock } from './clock.ts';
import type { Config } from './config.ts';
import type { DbHandle } from './db/connect.ts';
import { NamedLocks } from './db/named-lock.ts';
import { DomainEvents } from './events/index.ts';
import { Readiness } from './http/health.ts';
import {
  EventService,
  EventStore,
  EventWriter,
  ExperimentService,
  ExperimentStore,
  MetricService,
  MetricStore,
  ResultsService,
  ResultsStore,
  ExposureRecorder,
} from './experiments/index.ts';
import {
  ExperimentGuardrailData,
  PrometheusClient,
  ReleaseGuard,
  ReleaseRuleGuard,
  ReleaseService,
  ReleaseStore,
  ReleaseTemplateService,
} from './releases/index.ts';
import { FeedbackService, FeedbackStore } from './feedback/index.ts';
import { FlagdService, ProjectDocumentService, UnleashImportService } from './documents/index.ts';
import { openFlagReadPath } from './evaluation/index.ts';
import { FlagUsage, FlagUsageStore } from './usage/index.ts';
import { FlagdSyncServer, FlagdSyncService, FlagdSyncStore } from './flagd-sync/index.ts';
import { FlagService, FlagStore, FlagWrites, PlaygroundService } from './flags/index.ts';
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
import { startTracing } from './tracing/tracing.ts';
import { allDeliveries, MailSender, type OutboxSettings, Scheduler, WebhookSender, WebhookTargetRule } from './delivery/index.ts';
import { WebhookService, WebhookStore, WebhookWorker } from './webhooks/index.ts';
import { ProjectService, ProjectStore } from './projects/index.ts';
import { SegmentService, SegmentStore } from './segments/index.ts';
import {
  CaptchaVerifier,
  DeliveryAlerts,
  OutboxService,
  OutboxStore,
  OutboxWorker,
  PersonalDataService,
  RetentionJob,
  SubmissionDeliveryService,
  SubmissionExportService,
  SubmissionIntakeService,
  SubmissionService,
  SubmissionStore,
} from './submissions/index.ts';

import { openFileStorage } from './compose/files.ts';
import { scheduleJobs } from './compose/jobs.ts';
import type { Ports, Services } from './compose/services.ts';

export type { Ports, Services } from './compose/services.ts';

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
  const clock = ports.clock ?? systemClock;
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
    clock,
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
    retentionDays: config.usage.retentionDays,
    log,
  });
  // The one write door of a flag: the admin API, change requests, the flagd import and flags as code all go through it.
  const flagWrites = new FlagWrites({ store: flagStore, segments, audit });
  // An active release's rule is moved only by its release (issue 33).
  flagWrites.guard(new ReleaseRuleGuard());
  const flags = new FlagService({ db, store: flagStore, projects, segments, events, audit, clock, usage, writes: flagWrites });
  const flagd = new FlagdService({ db, store: flagStore, projects, segments, events, audit, clock, writes: flagWrites });
  const playground = new PlaygroundService({ db, store: flagStore, projects, segments, clock });
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
  // Server-side exposures: the read path calls its port (ExposurePort), experiments/ answers it.
  const exposures = new ExposureRecorder({ db, experiments: experimentStore, writer: eventWriter, clock, log });
  experiments.listen(exposures);
  reads.exposures = exposures;
  const experimentResults = new ResultsService({ db, store: new ResultsStore(handle.dialect), experiments: experimentStore, metrics: metricStore, projects });
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
  const documents = new ProjectDocumentService({
    db,
    store: flagStore,
    writes: flagWrites,
    projects,
    segments,
    events,
    audit,
    clock,
    protectedChanges: promotion,
  });
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
  const submissionOutbox = new OutboxService(db, outboxStore);
  const submissionIntake = new SubmissionIntakeService({
    db,
    store: submissionStore,
    outbox: submissionOutbox,
    events,
    mailEnabled: config.smtpUrl !== undefined,
    publicUrl: config.publicUrl,
    clock,
    captcha: new CaptchaVerifier(config.captcha, log),
    files,
  });
  const submissions = new SubmissionService({
    db,
    store: submissionStore,
    forms,
    outbox: submissionOutbox,
    events,
    listPageBytes: config.forms.listPageBytes,
    audit,
    files,
    intake: submissionIntake,
    clock,
  });
  // The owners hear of a delivery given up (issue 34), by e-mail when SMTP is set.
  if (config.smtpUrl !== undefined)
    new DeliveryAlerts({ events, forms, accounts: accounts.members, outbox: submissionOutbox, publicUrl: config.publicUrl, clock });
  const submissionExports = new SubmissionExportService({ db, store: submissionStore, forms });
  const personalData = new PersonalDataService({ db, store: submissionStore, forms, audit, files, events: trackedEvents });
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
  const submissionDeliveries = new SubmissionDeliveryService({
    db,
    forms,
    outbox: submissionOutbox,
    intake: submissionIntake,
    deliver: outbox,
    mailEnabled: config.smtpUrl !== undefined,
    audit,
    clock,
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
  const scheduler = new Scheduler({ runsJobs: ports.worker?.runsJobs ?? true, log, locks: new NamedLocks(db, handle.dialect) });
  scheduleJobs(scheduler, config, { changes, changeScheduler, outbox, webhookWorker, retention, usage, exposures, releaseGuard });
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
    flagWrites,
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
    experimentResults,
    exposures,
    changeRequests,
    changeReviews,
    changeViews,
    changeApplier,
    promotion,
    changeScheduler,
    audit,
    forms,
    submissions,
    submissionIntake,
    submissionExports,
    submissionDeliveries,
    personalData,
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
