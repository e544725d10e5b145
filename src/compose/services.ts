import type { EventService, ExperimentService, ExposureRecorder, MetricService, ResultsService } from '../experiments/index.ts';
import type { ReleaseGuard, ReleaseService, ReleaseTemplateService } from '../releases/index.ts';
import type { Logger } from 'pino';
import type { ApiKeyService } from '../api-keys/index.ts';
import type { AuditLog } from '../audit/index.ts';
import type { ChangeApplier, ChangeRequestService, ChangeRequestViews, ChangeReviewService, ChangeScheduler, PromotionService } from '../changes/index.ts';
import type { CodeRefService } from '../code-refs/index.ts';
import type { WorkerLink } from '../cluster/worker-link.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DbHandle } from '../db/connect.ts';
import type { Lookup, Scheduler } from '../delivery/index.ts';
import type { FlagdService, ProjectDocumentService, UnleashImportService } from '../documents/index.ts';
import type { FlagChanges, FlagReadModel, OfrepStreams, StreamTokens } from '../evaluation/index.ts';
import type { FlagUsage } from '../usage/index.ts';
import type { DomainEvents } from '../events/index.ts';
import type { FeedbackService } from '../feedback/index.ts';
import type { FileStorage } from '../files/index.ts';
import type { FlagdSyncServer, FlagdSyncService } from '../flagd-sync/index.ts';
import type { FlagService, FlagWrites, PlaygroundService } from '../flags/index.ts';
import type { FormReadTokenService, FormService } from '../forms/index.ts';
import type { Readiness } from '../http/health.ts';
import type { Identity, ScryptCost } from '../identity/index.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { ProjectService } from '../projects/index.ts';
import type { SegmentService } from '../segments/index.ts';
import type {
  FormAnalyticsService,
  OutboxWorker,
  PersonalDataService,
  RetentionJob,
  SubmissionDeliveryService,
  SubmissionExportService,
  SubmissionIntakeService,
  SubmissionService,
} from '../submissions/index.ts';
import type { Tracing } from '../tracing/tracing.ts';
import type { WebhookService, WebhookWorker } from '../webhooks/index.ts';

// What compose() (src/compose.ts) takes from outside and what it hands over.

/** What the process takes from outside that tests may replace. */
export interface Ports {
  clock: Clock;
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
  /** The one write door of a flag; a room that owns a rule over flags adds its `FlagWriteGuard` here. */
  readonly flagWrites: FlagWrites;
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
  /** Per-form read-only tokens for integrations (issue 34). */
  readonly formReadTokens: FormReadTokenService;
  /** A form's counts per day and its view counter (issue 34). */
  readonly formAnalytics: FormAnalyticsService;
  /** Experiments' events: POST /v1/track, their retention and personal data (issue 32). */
  readonly trackedEvents: EventService;
  /** Metrics of projects (issue 32). */
  readonly experimentMetrics: MetricService;
  /** Experiments of environments: drafts, start and stop (issue 32). */
  readonly experiments: ExperimentService;
  /** Results of experiments, computed from the stored events (issue 32). */
  readonly experimentResults: ResultsService;
  /** Server-side exposures of single-flag OFREP evaluations, buffered and written every second. */
  readonly exposures: ExposureRecorder;
  /** A form's inbox: list, read, mark and delete submissions. */
  readonly submissions: SubmissionService;
  /** Takes submissions in (the /v1/s routes). */
  readonly submissionIntake: SubmissionIntakeService;
  readonly submissionExports: SubmissionExportService;
  /** A form's test delivery and re-sends (issue 34). */
  readonly submissionDeliveries: SubmissionDeliveryService;
  /** Access and erasure requests across every form. */
  readonly personalData: PersonalDataService;
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
